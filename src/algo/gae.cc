#include "algo/gae.h"

#include <c10/core/GradMode.h>

#include "core/check.h"

namespace realign::algo {

GaeResult gae(const at::Tensor& rewards, const at::Tensor& values, const at::Tensor& mask, double gamma,
              double lambda) {
  REALIGN_CHECK(rewards.dim() == 2 && rewards.sizes() == values.sizes() && rewards.sizes() == mask.sizes());
  c10::NoGradGuard no_grad;
  const int64_t T = rewards.size(1);
  const at::Tensor r = rewards * mask, v = values.detach() * mask;
  at::Tensor advantages = at::zeros_like(r);
  at::Tensor next_value = at::zeros({r.size(0)}, r.options());
  at::Tensor next_adv = at::zeros({r.size(0)}, r.options());
  for (int64_t t = T - 1; t >= 0; --t) {
    const at::Tensor m = mask.select(1, t);
    const at::Tensor delta = r.select(1, t) + gamma * next_value - v.select(1, t);
    const at::Tensor adv = delta + gamma * lambda * next_adv;
    advantages.select(1, t).copy_(adv * m);
    // Outside the mask the recursion passes through unchanged (padding between or after responses).
    next_value = at::where(m > 0, v.select(1, t), next_value);
    next_adv = at::where(m > 0, adv, next_adv);
  }
  return GaeResult{advantages, (advantages + v) * mask};
}

at::Tensor token_rewards(const at::Tensor& scores, const at::Tensor& kl, const at::Tensor& mask, double kl_coef,
                         double score_clip) {
  REALIGN_CHECK(scores.dim() == 1 && scores.size(0) == mask.size(0));
  c10::NoGradGuard no_grad;
  at::Tensor s = scores;
  if (score_clip > 0) s = s.clamp(-score_clip, score_clip);
  at::Tensor rewards = -kl_coef * kl.detach() * mask;
  // Last response token of each row: the highest index where the mask is 1.
  const at::Tensor positions = at::arange(mask.size(1), mask.options()).unsqueeze(0).expand_as(mask);
  const at::Tensor last = (positions * mask).argmax(1);
  rewards.scatter_add_(1, last.unsqueeze(1), s.unsqueeze(1).to(rewards.dtype()));
  return rewards;
}

}  // namespace realign::algo
