// A reader's message in the user's words. The engines' readers read one release's keys and flags (veRL's
// reward_model.*, OpenRLHF's flat flags); a script for another release is spelled in the reader's words
// first (openrlhf_flags.h, verl_reward_keys.h), and what the reader says is spelled back, so a note or error
// never names a key or flag the user did not write.
#pragma once

#include <map>
#include <string>

#include "engines/engine.h"

namespace realign::engines {

// `text` with every whole key or flag (a run of letters, digits, `_`, `.`, `-`; a trailing full stop is the
// sentence's) found in `user_names` replaced by the script's spelling.
std::string in_users_words(const std::string& text, const std::map<std::string, std::string>& user_names);

// `run`'s notes and sources in the script's words.
void to_users_words(ReadRun& run, const std::map<std::string, std::string>& user_names);

// Calls `read` and returns its run in the script's words; an Error it throws is thrown again in them.
template <typename Read>
ReadRun read_in_users_words(const std::map<std::string, std::string>& user_names, Read read) {
  try {
    ReadRun run = read();
    to_users_words(run, user_names);
    return run;
  } catch (const Error& e) {
    const std::string message = e.what();
    const std::string text = e.path().empty() ? message : message.substr(e.path().size() + 2);
    throw Error(in_users_words(e.path(), user_names), in_users_words(text, user_names));
  }
}

}  // namespace realign::engines
