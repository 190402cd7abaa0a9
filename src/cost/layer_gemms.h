// The matmuls of one transformer layer's forward pass on one tensor-parallel rank, as shapes (rows, outputs,
// depth per GEMM): standard or latent attention, then a dense MLP or a mixture of experts. The per-call time
// model prices each at the achieved rate of its shape; their FLOPs add up to ModelSpec::forward_flops's
// matmuls (with the expert load at its mean).
#pragma once

#include <vector>

#include "graph/model_spec.h"

namespace realign {

struct GemmShape {
  double rows = 0;     // tokens multiplied (per expert for routed experts)
  double outputs = 0;  // per rank
  double depth = 0;    // the reduction dimension, per rank
  double count = 1;    // GEMMs of this shape (a rank's local experts)
  double flops() const { return count * 2.0 * rows * outputs * depth; }
};

// Megatron's split: column-parallel matmuls (QKV; the MLP's gate and up) split their outputs over tp and keep
// the full depth; row-parallel ones (attention output, MLP output) multiply over a 1/tp slice. Latent
// attention (DeepSeek, as Megatron-Core cuts it) keeps its down-projections to the latents whole on every tp
// rank and splits the up-projections and the output by heads.
std::vector<GemmShape> attention_gemms(const ModelSpec& m, double tokens, int tp);

// A dense layer's MLP (SwiGLU: gate and up as one GEMM of twice the outputs; GPT-2: c_fc), split over tp.
std::vector<GemmShape> dense_mlp_gemms(const ModelSpec& m, double tokens, int tp);

// A mixture-of-experts layer's MLP on the busiest rank (plan/expert_parallel.h): the router over the tokens
// the rank routes, the routed tokens' GEMMs over the experts it holds (each expert's rows: the routed token
// copies x `load` / its experts), and the shared experts split over tp like a dense MLP. With ep = 1 a rank
// routes all of its tp group's tokens through a 1/tp slice of every expert; with ep > 1 it routes a 1/tp
// share through num_experts/ep whole experts.
std::vector<GemmShape> moe_mlp_gemms(const ModelSpec& m, double tokens, int tp, int ep, double load);

}  // namespace realign
