#include "algo/preference_loss.h"

#include <c10/core/GradMode.h>

#include "core/check.h"

namespace realign::algo {
namespace {

PairLoss pair_loss(const at::Tensor& margin, double label_smoothing) {
  PairLoss out;
  const at::Tensor nll = -at::log_sigmoid(margin);
  out.loss = label_smoothing > 0
                 ? ((1.0 - label_smoothing) * nll + label_smoothing * (-at::log_sigmoid(-margin))).mean()
                 : nll.mean();
  c10::NoGradGuard no_grad;
  out.accuracy = (margin > 0).to(at::kFloat).mean().item<double>();
  out.margin = margin.mean().item<double>();
  return out;
}

}  // namespace

PairLoss dpo_loss(const at::Tensor& chosen_logps, const at::Tensor& rejected_logps, const at::Tensor& ref_chosen_logps,
                  const at::Tensor& ref_rejected_logps, double beta, double label_smoothing) {
  REALIGN_CHECK(chosen_logps.sizes() == rejected_logps.sizes());
  const at::Tensor chosen_reward = beta * (chosen_logps - ref_chosen_logps.detach());
  const at::Tensor rejected_reward = beta * (rejected_logps - ref_rejected_logps.detach());
  return pair_loss(chosen_reward - rejected_reward, label_smoothing);
}

PairLoss bradley_terry_loss(const at::Tensor& chosen_scores, const at::Tensor& rejected_scores) {
  REALIGN_CHECK(chosen_scores.sizes() == rejected_scores.sizes());
  return pair_loss(chosen_scores - rejected_scores, 0);
}

}  // namespace realign::algo
