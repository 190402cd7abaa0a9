#include "algo/advantages.h"

#include <c10/core/GradMode.h>

#include "core/check.h"

namespace realign::algo {

at::Tensor group_advantages(const at::Tensor& rewards, int64_t group_size, bool scale, double eps) {
  REALIGN_CHECK(rewards.dim() == 1 && group_size > 0 && rewards.size(0) % group_size == 0)
      << rewards.sizes() << " / " << group_size;
  c10::NoGradGuard no_grad;
  const at::Tensor grouped = rewards.view({-1, group_size});
  at::Tensor centred = grouped - grouped.mean(1, true);
  if (scale) centred = centred / (grouped.std(1, /*unbiased=*/true, true) + eps);
  return centred.reshape({-1});
}

at::Tensor remax_advantages(const at::Tensor& rewards, const at::Tensor& greedy_rewards) {
  REALIGN_CHECK(rewards.sizes() == greedy_rewards.sizes());
  c10::NoGradGuard no_grad;
  return rewards - greedy_rewards;
}

at::Tensor broadcast_to_tokens(const at::Tensor& per_sequence, const at::Tensor& mask) {
  REALIGN_CHECK(per_sequence.dim() == 1 && mask.dim() == 2 && mask.size(0) == per_sequence.size(0));
  return per_sequence.unsqueeze(1).to(mask.dtype()) * mask;
}

}  // namespace realign::algo
