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

}  // namespace realign::engines
