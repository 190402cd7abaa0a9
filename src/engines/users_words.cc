#include "engines/users_words.h"

#include <cctype>

namespace realign::engines {

namespace {

bool key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

}  // namespace

std::string in_users_words(const std::string& text, const std::map<std::string, std::string>& user_names) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (!key_char(text[i])) {
      out += text[i++];
      continue;
    }
    // A whole key only: `--pretrain` is not the tail of `--critic_pretrain`.
    size_t end = i;
    while (end < text.size() && key_char(text[end])) ++end;
    size_t word_end = end;
    while (word_end > i + 1 && text[word_end - 1] == '.') --word_end;  // a sentence's full stop
    const auto it = user_names.find(text.substr(i, word_end - i));
    out += it == user_names.end() ? text.substr(i, word_end - i) : it->second;
    out += text.substr(word_end, end - word_end);
    i = end;
  }
  return out;
}

void to_users_words(ReadRun& run, const std::map<std::string, std::string>& user_names) {
  for (std::string& note : run.notes) note = in_users_words(note, user_names);
  for (auto& [key, source] : run.sources) source = in_users_words(source, user_names);
}

std::map<std::string, std::string> written_at(const std::vector<ConfigEntry>& entries) {
  std::map<std::string, std::string> at;
  for (const ConfigEntry& e : entries)
    if (e.line > 0) at[e.key] = e.file + ":" + std::to_string(e.line);
  return at;
}

void throw_as_written(const Error& e, const std::map<std::string, std::string>& user_names,
                      const std::map<std::string, std::string>& at) {
  const std::string message = e.what();
  const std::string text = in_users_words(e.path().empty() ? message : message.substr(e.path().size() + 2),
                                          user_names);
  const std::string key = in_users_words(e.path(), user_names);
  if (const auto where = at.find(key); where != at.end()) throw ScriptKeyError(key, text, where->second);
  throw Error(key, text);
}

}  // namespace realign::engines
