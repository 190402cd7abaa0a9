// A reader's message in the user's words. The engines' readers read one release's keys and flags (veRL's
// reward_model.*, OpenRLHF's flat flags); a script for another release is spelled in the reader's words
// first (openrlhf_flags.h, verl_reward_keys.h), and what the reader says is spelled back, so a note or error
// never names a key or flag the user did not write.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "core/error.h"
#include "engines/engine.h"

namespace realign::engines {

// `text` with every whole key or flag (a run of letters, digits, `_`, `.`, `-`; a trailing full stop is the
// sentence's) found in `user_names` replaced by the script's spelling.
std::string in_users_words(const std::string& text, const std::map<std::string, std::string>& user_names);

// `run`'s notes and sources in the script's words.
void to_users_words(ReadRun& run, const std::map<std::string, std::string>& user_names);

// Where a script writes each of its keys, "FILE:LINE" by the key as the script spells it (entries with a
// line: script_reader.h).
std::map<std::string, std::string> written_at(const std::vector<ConfigEntry>& entries);

// An error about a key the script writes: path() is the key, what() leads with where it is written
// ("run.sh:40: trainer.nnodes: ..."), as a compiler names a line.
class ScriptKeyError : public Error {
 public:
  ScriptKeyError(const std::string& key, const std::string& message, const std::string& where)
      : Error(key, message), what_(where + ": " + key + ": " + message) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

// `e` again, its key and message in the script's words, and where the script writes the key when it does
// (`at`: written_at).
[[noreturn]] void throw_as_written(const Error& e, const std::map<std::string, std::string>& user_names,
                                   const std::map<std::string, std::string>& at);

// Calls `read` and returns its run in the script's words (`user_names`: the reader's key -> the script's):
// its notes, its sources (each with the line that writes it: import names a model it cannot find so), and
// the notes and errors of its layout once read; an Error it throws is thrown again in the script's words,
// with the line of the key it names (`written`: the launch's entries as the script spells them).
template <typename Read>
ReadRun read_as_written(const std::vector<ConfigEntry>& written,
                        const std::map<std::string, std::string>& user_names, Read read) {
  const std::map<std::string, std::string> at = written_at(written);
  ReadRun run;
  try {
    run = read();
  } catch (const Error& e) {
    throw_as_written(e, user_names, at);
  }
  to_users_words(run, user_names);
  // A key the launch leaves out holds the engine's default: said where import names it.
  for (auto& [key, source] : run.sources)
    if (const auto where = at.find(source); where != at.end())
      source = where->second + ": " + source;
    else if (std::none_of(written.begin(), written.end(), [&](const ConfigEntry& e) { return e.key == source; }))
      source += " (not set: the engine's default)";
  run.plan = [plan = std::move(run.plan), user_names, at](const DataflowGraph& g, const Cluster& c,
                                                          std::vector<std::string>& notes) {
    const size_t before = notes.size();
    try {
      ExecutionPlan p = plan(g, c, notes);
      for (size_t i = before; i < notes.size(); ++i) notes[i] = in_users_words(notes[i], user_names);
      return p;
    } catch (const Error& e) {
      throw_as_written(e, user_names, at);
    }
  };
  return run;
}

}  // namespace realign::engines
