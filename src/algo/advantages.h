// Outcome-level advantages of the critic-free algorithms, one scalar per sequence, broadcast over its tokens.
#pragma once

#include <ATen/ATen.h>

namespace realign::algo {

// GRPO (Shao et al. 2024): rewards (B) in consecutive groups of `group_size` samples of one prompt;
// A = (r - mean(group)) / (std(group) + eps), or only centred when scale is false (Dr. GRPO).
at::Tensor group_advantages(const at::Tensor& rewards, int64_t group_size, bool scale = true, double eps = 1e-6);

// ReMax (Li et al. 2023): A = r(sampled) - r(greedy), the greedy response's reward as the baseline.
at::Tensor remax_advantages(const at::Tensor& rewards, const at::Tensor& greedy_rewards);

// (B) -> (B, T) over the response mask.
at::Tensor broadcast_to_tokens(const at::Tensor& per_sequence, const at::Tensor& mask);

}  // namespace realign::algo
