// veRL's reward model across its releases, for its reader: the reader (verl_reader.cc) reads v0.7.0's
// Megatron or FSDP reward worker (reward_model.*); from v0.7.1 the reward loop serves it
// (reward.reward_model.*: a vLLM server on the pool, asleep between its calls). A launch's reward-loop keys
// are spelled here in the reader's words, and what the reader says back in the launch's (users_words.h).
#pragma once

#include <map>
#include <string>

#include "engines/hydra_config.h"

namespace realign::engines {

struct ReaderLaunch {
  HydraLaunch launch;                             // in the reader's words
  std::map<std::string, std::string> user_names;  // reader's key -> the launch's
};

// reward.reward_model.enable and model_path as reward_model.enable and model.path; the server's token budget
// per step (rollout.max_num_batched_tokens, veRL's default 8192) as the worker's dynamic batching budget, so
// a micro-batch holds the sequences one step prefills; its Megatron sizes as the actor's (realign ties the
// reward model to the actor's layout; a server size set otherwise is noted). Unchanged without them.
ReaderLaunch as_reader_reward_keys(HydraLaunch launch);

}  // namespace realign::engines
