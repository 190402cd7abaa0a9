// PPO's clipped surrogate policy loss and clipped value loss, token-averaged over the response mask.
#pragma once

#include <ATen/ATen.h>

namespace realign::algo {

struct PolicyLoss {
  at::Tensor loss;       // scalar, differentiable w.r.t. logprobs
  double clip_fraction;  // share of tokens where the clipped term was chosen
  double approx_kl;      // mean of (old - new) log-prob: the KL of the update, for early stopping
};

// ratio = exp(logprobs - old_logprobs); loss = mean(max(-A * ratio, -A * clip(ratio, 1 - eps_low, 1 +
// eps_high))). Dual clip (Ye et al. 2020) with c > 1 bounds the loss of negative advantages at -c * A; c <= 1
// disables it.
PolicyLoss ppo_policy_loss(const at::Tensor& logprobs, const at::Tensor& old_logprobs,
                           const at::Tensor& advantages, const at::Tensor& mask, double eps_low,
                           double eps_high, double dual_clip = 0);

// Decoupled PPO for batches sampled by an older policy (Hilton et al. 2022, "Batch size-invariance for
// policy optimization", arXiv 2110.00641; as AReaL trains asynchronously, Fu et al. 2025, arXiv 2505.24298):
//   loss = mean_t  w_t * max(-A_t * r_t, -A_t * clip(r_t, 1 - eps, 1 + eps)),
//   r_t = pi_theta / pi_prox,   w_t = pi_prox / pi_behav  (a constant, no gradient),
// with pi_prox the proximal policy (the weights the update starts from), pi_behav the policy that sampled.
// Tokens whose w exceeds `cap` are left out of the loss (w = 0), as AReaL's behav_imp_weight_cap does;
// cap <= 0 keeps every token. Since w >= 0 scales both terms of the max alike, the loss is ppo_policy_loss
// against pi_prox with the advantage A * w: behaviour_weights gives w for that product.
struct BehaviourWeights {
  at::Tensor weights;  // (B, T), 0 outside the mask and where w > cap
  double mean = 0;     // mean w over the masked tokens, before the cap
  double dropped = 0;  // share of the masked tokens left out by the cap
};
BehaviourWeights behaviour_weights(const at::Tensor& proximal_logprobs, const at::Tensor& behaviour_logprobs,
                                   const at::Tensor& mask, double cap);

struct ValueLoss {
  at::Tensor loss;
  double clip_fraction;
};

// 0.5 * mean(max((v - R)^2, (clip(v, v_old - eps, v_old + eps) - R)^2)); eps <= 0 disables clipping.
ValueLoss ppo_value_loss(const at::Tensor& values, const at::Tensor& old_values, const at::Tensor& returns,
                         const at::Tensor& mask, double eps);

}  // namespace realign::algo
