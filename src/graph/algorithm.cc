#include "graph/algorithm.h"

namespace realign {

std::string to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kPpo:
      return "ppo";
    case Algorithm::kGrpo:
      return "grpo";
    case Algorithm::kRemax:
      return "remax";
    case Algorithm::kDpo:
      return "dpo";
    case Algorithm::kSft:
      return "sft";
    case Algorithm::kRm:
      return "rm";
  }
  return "?";
}

std::vector<Algorithm> all_algorithms() {
  return {Algorithm::kPpo, Algorithm::kGrpo, Algorithm::kRemax,
          Algorithm::kDpo, Algorithm::kSft,  Algorithm::kRm};
}

std::optional<Algorithm> algorithm_from_string(const std::string& name) {
  for (Algorithm a : all_algorithms())
    if (to_string(a) == name) return a;
  return std::nullopt;
}

bool is_rl(Algorithm algorithm) {
  return algorithm == Algorithm::kPpo || algorithm == Algorithm::kGrpo || algorithm == Algorithm::kRemax;
}

std::string stage_name(Algorithm algorithm) { return is_rl(algorithm) ? "rl" : to_string(algorithm); }

}  // namespace realign
