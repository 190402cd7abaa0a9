// PPO's clipped surrogate policy loss and clipped value loss, token-averaged over the response mask.
#pragma once

#include <ATen/ATen.h>

namespace realign::algo {

struct PolicyLoss {
  at::Tensor loss;         // scalar, differentiable w.r.t. logprobs
  double clip_fraction;    // share of tokens where the clipped term was chosen
  double approx_kl;        // mean of (old - new) log-prob: the KL of the update, for early stopping
};

// ratio = exp(logprobs - old_logprobs); loss = mean(max(-A * ratio, -A * clip(ratio, 1 - eps_low, 1 + eps_high))).
// Dual clip (Ye et al. 2020) with c > 1 bounds the loss of negative advantages at -c * A; c <= 1 disables it.
PolicyLoss ppo_policy_loss(const at::Tensor& logprobs, const at::Tensor& old_logprobs, const at::Tensor& advantages,
                           const at::Tensor& mask, double eps_low, double eps_high, double dual_clip = 0);

struct ValueLoss {
  at::Tensor loss;
  double clip_fraction;
};

// 0.5 * mean(max((v - R)^2, (clip(v, v_old - eps, v_old + eps) - R)^2)); eps <= 0 disables clipping.
ValueLoss ppo_value_loss(const at::Tensor& values, const at::Tensor& old_values, const at::Tensor& returns,
                         const at::Tensor& mask, double eps);

}  // namespace realign::algo
