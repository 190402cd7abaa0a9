#include "algo/ppo_loss.h"

#include <c10/core/GradMode.h>

#include "algo/masked.h"

namespace realign::algo {

PolicyLoss ppo_policy_loss(const at::Tensor& logprobs, const at::Tensor& old_logprobs,
                           const at::Tensor& advantages, const at::Tensor& mask, double eps_low,
                           double eps_high, double dual_clip) {
  const at::Tensor adv = advantages.detach();
  const at::Tensor log_ratio = logprobs - old_logprobs.detach();
  const at::Tensor ratio = at::exp(log_ratio);
  const at::Tensor unclipped = -adv * ratio;
  const at::Tensor clipped = -adv * ratio.clamp(1.0 - eps_low, 1.0 + eps_high);
  at::Tensor per_token = at::max(unclipped, clipped);
  if (dual_clip > 1.0) per_token = at::where(adv < 0, at::min(per_token, -adv * dual_clip), per_token);
  PolicyLoss out;
  out.loss = masked_mean(per_token, mask);
  {
    c10::NoGradGuard no_grad;
    out.clip_fraction = masked_mean((clipped > unclipped).to(mask.dtype()), mask).item<double>();
    out.approx_kl = masked_mean(-log_ratio, mask).item<double>();
  }
  return out;
}

BehaviourWeights behaviour_weights(const at::Tensor& proximal_logprobs, const at::Tensor& behaviour_logprobs,
                                   const at::Tensor& mask, double cap) {
  c10::NoGradGuard no_grad;
  const at::Tensor w = at::exp(proximal_logprobs - behaviour_logprobs) * mask;
  BehaviourWeights out;
  out.mean = masked_mean(w, mask).item<double>();
  if (cap > 0) {
    const at::Tensor kept = (w <= cap).to(mask.dtype()) * mask;
    out.dropped = 1.0 - masked_mean(kept, mask).item<double>();
    out.weights = w * kept;
  } else {
    out.weights = w;
  }
  return out;
}

ValueLoss ppo_value_loss(const at::Tensor& values, const at::Tensor& old_values, const at::Tensor& returns,
                         const at::Tensor& mask, double eps) {
  const at::Tensor target = returns.detach();
  const at::Tensor unclipped = (values - target).pow(2);
  ValueLoss out;
  if (eps <= 0) {
    out.loss = 0.5 * masked_mean(unclipped, mask);
    out.clip_fraction = 0;
    return out;
  }
  const at::Tensor old = old_values.detach();
  const at::Tensor clipped_values = old + (values - old).clamp(-eps, eps);
  const at::Tensor clipped = (clipped_values - target).pow(2);
  out.loss = 0.5 * masked_mean(at::max(unclipped, clipped), mask);
  c10::NoGradGuard no_grad;
  out.clip_fraction = masked_mean((clipped > unclipped).to(mask.dtype()), mask).item<double>();
  return out;
}

}  // namespace realign::algo
