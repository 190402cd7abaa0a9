// OpenRLHF's flags across its releases, for its reader: the reader (openrlhf_reader.cc) reads
// train_ppo_ray.py's flat flags of v0.9 (--actor_num_nodes, --prompt_max_len, ...); a script for a current
// release passes dotted groups (--actor.num_nodes, --data.max_len) and one for v0.10.x flat flags with
// --max_len / --max_new_tokens. Both are spelled here in the reader's words (and what the reader says back in
// the script's: users_words.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engines/engine.h"

namespace realign::engines {

struct ReaderFlags {
  std::vector<ConfigEntry> entries;               // in the reader's words
  std::map<std::string, std::string> user_names;  // reader's flag -> the script's
};

// The script's flags in the reader's words: dotted flags by the release table (releases.h, OpenRLHF
// v0.10.1.post2's flat names), then `--max_len` (prompt and response) and `--max_new_tokens` as
// `--prompt_max_len` and `--generate_max_len`.
ReaderFlags as_reader_flags(const std::vector<ConfigEntry>& entries);

}  // namespace realign::engines
