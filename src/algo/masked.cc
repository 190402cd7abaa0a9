#include "algo/masked.h"

#include "core/check.h"

namespace realign::algo {

at::Tensor masked_sum(const at::Tensor& x, const at::Tensor& mask) {
  REALIGN_CHECK(x.sizes() == mask.sizes()) << x.sizes() << " vs " << mask.sizes();
  return (x * mask).sum();
}

at::Tensor masked_mean(const at::Tensor& x, const at::Tensor& mask) {
  return masked_sum(x, mask) / mask.sum().clamp_min(1.0);
}

at::Tensor masked_var(const at::Tensor& x, const at::Tensor& mask) {
  const at::Tensor n = mask.sum();
  const at::Tensor mean = masked_sum(x, mask) / n.clamp_min(1.0);
  const at::Tensor sq = masked_sum((x - mean).pow(2), mask);
  return sq / (n - 1.0).clamp_min(1.0);
}

at::Tensor masked_whiten(const at::Tensor& x, const at::Tensor& mask, bool shift_mean, double eps) {
  const at::Tensor mean = masked_mean(x, mask);
  const at::Tensor var = masked_var(x, mask);
  at::Tensor out = (x - mean) * at::rsqrt(var + eps);
  if (!shift_mean) out = out + mean;
  return out * mask;
}

}  // namespace realign::algo
