#include "algo/kl.h"

#include <algorithm>

#include "core/error.h"

namespace realign::algo {

KlEstimator kl_estimator_from_string(const std::string& name, const std::string& path) {
  if (name == "k1") return KlEstimator::kK1;
  if (name == "k2") return KlEstimator::kK2;
  if (name == "k3") return KlEstimator::kK3;
  throw Error(path, "unknown KL estimator '" + name + "'; choose k1, k2 or k3");
}

at::Tensor kl_per_token(const at::Tensor& logprobs, const at::Tensor& ref_logprobs, KlEstimator estimator) {
  const at::Tensor log_ratio = logprobs - ref_logprobs;  // log p/q
  switch (estimator) {
    case KlEstimator::kK1: return log_ratio;
    case KlEstimator::kK2: return 0.5 * log_ratio.pow(2);
    case KlEstimator::kK3: return at::exp(-log_ratio) + log_ratio - 1.0;
  }
  return log_ratio;
}

void AdaptiveKlController::update(double observed_kl, int64_t n_steps) {
  const double error = std::clamp(observed_kl / target_ - 1.0, -0.2, 0.2);
  coef_ *= 1.0 + error * double(n_steps) / horizon_;
}

}  // namespace realign::algo
