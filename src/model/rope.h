// Rotary position embeddings as HF LLaMA computes them: inverse frequencies from rope_theta (with llama3
// frequency scaling when configured), cos/sin in fp32, rotate_half pairing (i, i + d/2).
#pragma once

#include <ATen/core/Tensor.h>

#include "graph/model_spec.h"

namespace realign::model {

// (head_dim / 2) fp32 inverse frequencies, on the CPU.
at::Tensor rope_inv_freq(const ModelSpec& spec);

// The rotation at each position, computed once per forward and shared by every layer's queries and keys:
// cos and sin (B, 1, T, d) in `dtype`, from fp32 angles.
struct RopeTables {
  at::Tensor cos, sin;
};
// positions (B, T) int64; inv_freq (d/2) fp32 on positions' device.
RopeTables rope_tables(const at::Tensor& positions, const at::Tensor& inv_freq, at::ScalarType dtype);

// x: (B, heads, T, d) in the tables' dtype. Returns x rotated.
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables);

}  // namespace realign::model
