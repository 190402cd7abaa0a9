// The algorithms realign trains with. A run goes through stages, each one algorithm's dataflow graph: PPO's
// run is an SFT stage, a reward-model stage when the reward is learned, then the PPO stage.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace realign {

enum class Algorithm { kPpo, kGrpo, kRemax, kDpo, kSft, kRm };

std::string to_string(Algorithm algorithm);  // "ppo", "grpo", "remax", "dpo", "sft", "rm"
std::optional<Algorithm> algorithm_from_string(const std::string& name);
std::vector<Algorithm> all_algorithms();

// PPO, GRPO and ReMax: the actor generates its batch and learns from the rewards of what it generated.
bool is_rl(Algorithm algorithm);

// The stage a run of `algorithm` is in while it trains with it, as metrics name it: "rl" for the RL family,
// else the algorithm's name.
std::string stage_name(Algorithm algorithm);

}  // namespace realign
