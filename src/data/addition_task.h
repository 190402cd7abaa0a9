// The built-in task that needs no download: multi-digit addition. Prompts look like "37+85=", the answer is
// "122" followed by a newline (the stop token). Its verifier gives rewards by rule, and its preference
// variant labels pairs by a rule the reward model has to discover (a correct answer beats a wrong one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/datasets.h"

namespace realign::data {

struct AdditionTask {
  int min_digits = 1;
  int max_digits = 2;
  uint64_t seed = 0;

  // `n` prompts with their answers, deterministic in (seed, offset): offset separates train and eval sets.
  std::vector<PromptRecord> prompts(int64_t n, uint64_t offset = 0) const;
  std::vector<SftRecord> sft_pairs(int64_t n, uint64_t offset = 0) const;
  // Chosen: the correct answer; rejected: half the time a near miss (one digit changed, or off by a small
  // amount), a quarter a far miss (a random number), a quarter a broken answer (a digit dropped or added).
  std::vector<PreferenceRecord> preference_pairs(int64_t n, uint64_t offset = 0) const;
};

// 1 for an exact answer (text before the first newline, surrounding spaces ignored); otherwise, with
// partial_credit, up to 0.5 for the share of right-aligned digits that match; else 0.
double addition_reward(const std::string& response, const std::string& answer, bool partial_credit);

// The response's text up to its stop token ("\n"), without surrounding spaces.
std::string first_line(const std::string& response);

}  // namespace realign::data
