// Masked reductions over (batch, time) tensors: the building block of every RLHF loss. A mask is 1 on the
// tokens that count (response tokens) and 0 elsewhere; all are float tensors of the same shape.
#pragma once

#include <ATen/ATen.h>

namespace realign::algo {

at::Tensor masked_sum(const at::Tensor& x, const at::Tensor& mask);
// Mean over the masked tokens of the whole batch (token-level averaging, as PPO implementations do).
at::Tensor masked_mean(const at::Tensor& x, const at::Tensor& mask);
// Unbiased variance over the masked tokens.
at::Tensor masked_var(const at::Tensor& x, const at::Tensor& mask);
// (x - mean) / sqrt(var + eps) over the masked tokens; `shift_mean` false keeps the mean (OpenRLHF/TRL option).
at::Tensor masked_whiten(const at::Tensor& x, const at::Tensor& mask, bool shift_mean = true, double eps = 1e-8);

}  // namespace realign::algo
