// Shared helpers of the model tests: tiny specs, a model filled from init_rank_params, random sequences, and
// tensor comparison that prints the first mismatches.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_spec.h"
#include "model/transformer.h"

namespace realign::model::testing {

// llama-tiny with llama3 rope scaling that bites at these lengths (original_max_position 16).
ModelSpec llama_scaled_tiny();
// Qwen2-style (qkv bias, tied embeddings) and Mistral-style (sliding window 5) tiny shapes.
ModelSpec qwen2_tiny();
ModelSpec mistral_tiny();
// Mixture-of-experts tiny shapes: Mixtral (8 experts, top-2, every layer), Qwen3-MoE (8 experts, top-2
// renormalised, q/k norms, layer 1 of 3 dense by mlp_only_layers), Qwen2-MoE (4 experts, top-2 not
// renormalised, a gated shared expert, qkv biases, every second layer MoE by decoder_sparse_step).
ModelSpec mixtral_tiny();
ModelSpec qwen3_moe_tiny();
ModelSpec qwen2_moe_tiny();

Transformer make_model(const ModelSpec& spec, HeadKind head, uint64_t seed, at::ScalarType dtype = at::kFloat,
                       ParallelContext parallel = {});

std::vector<std::vector<int64_t>> random_sequences(int64_t vocab, const std::vector<int64_t>& lengths,
                                                   uint64_t seed);

// "" when |got - want| <= atol + rtol * |want| everywhere; else the worst and first few mismatches.
std::string compare(const at::Tensor& got, const at::Tensor& want, double atol, double rtol);

}  // namespace realign::model::testing
