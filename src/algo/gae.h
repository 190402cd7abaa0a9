// Generalised advantage estimation (Schulman et al. 2016) over per-token rewards and values.
#pragma once

#include <ATen/ATen.h>

namespace realign::algo {

struct GaeResult {
  at::Tensor advantages;  // (B, T), zero outside the mask
  at::Tensor returns;     // (B, T) = advantages + values, the critic's targets
};

// rewards, values, mask: (B, T) float; the mask marks response tokens and is contiguous per row. The value after
// a row's last response token is 0 (episode end). Computed without gradients.
GaeResult gae(const at::Tensor& rewards, const at::Tensor& values, const at::Tensor& mask, double gamma,
              double lambda);

// Per-token rewards of PPO-RLHF: -kl_coef * kl on every response token, plus the sequence's score on its last
// response token (optionally clipped to [-clip, clip] first; clip <= 0 disables it).
at::Tensor token_rewards(const at::Tensor& scores, const at::Tensor& kl, const at::Tensor& mask, double kl_coef,
                         double score_clip = 0);

}  // namespace realign::algo
