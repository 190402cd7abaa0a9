// Rotary position embeddings as HF LLaMA computes them: inverse frequencies from rope_theta (with llama3
// frequency scaling when configured), cos/sin in fp32, rotate_half pairing (i, i + d/2).
#pragma once

#include <ATen/core/Tensor.h>

#include "graph/model_spec.h"

namespace realign::model {

// (head_dim / 2) fp32 inverse frequencies, on the CPU.
at::Tensor rope_inv_freq(const ModelSpec& spec);

// x: (B, heads, T, d); positions (B, T) int64; inv_freq (d/2) fp32 on x's device. Returns x rotated (x's dtype).
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& positions, const at::Tensor& inv_freq);

}  // namespace realign::model
