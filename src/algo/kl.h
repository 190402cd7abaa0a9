// KL divergence estimators between the policy and the reference, per token, from log-probabilities of the
// sampled tokens (Schulman's "Approximating KL divergence"): k1 = log p - log q, k2 = (log p - log q)^2 / 2,
// k3 = exp(log q - log p) - (log q - log p) - 1 (unbiased, non-negative), p the policy, q the reference.
// And the adaptive KL coefficient of Ziegler et al. (2019).
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace realign::algo {

enum class KlEstimator { kK1, kK2, kK3 };
KlEstimator kl_estimator_from_string(const std::string& name, const std::string& path);

at::Tensor kl_per_token(const at::Tensor& logprobs, const at::Tensor& ref_logprobs, KlEstimator estimator);

// Proportional controller: coef *= 1 + clip(kl / target - 1, -0.2, 0.2) * n_steps / horizon.
class AdaptiveKlController {
 public:
  AdaptiveKlController(double initial_coef, double target, double horizon)
      : coef_(initial_coef), target_(target), horizon_(horizon) {}
  double coef() const { return coef_; }
  void update(double observed_kl, int64_t n_steps);
  void set_coef(double coef) { coef_ = coef; }  // restored from a checkpoint

 private:
  double coef_, target_, horizon_;
};

}  // namespace realign::algo
