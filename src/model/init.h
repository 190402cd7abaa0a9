// Deterministic random initialisation in canonical names. Each parameter draws from its own generator,
// seeded with (seed, hash of its name), so every layout (tp, pp) built from the same seed holds the same model.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

#include "graph/param_layout.h"

namespace realign::model {

struct InitOptions {
  double std = 0.02;  // weights ~ N(0, std); GPT-2's residual projections use std / sqrt(2 * n_layers)
  // Norm weights 1 + N(0, 0.1) and biases N(0, std) instead of 1 and 0: tests use it so a wrong norm or
  // bias shows up in the numbers.
  bool random_norms_and_biases = false;
};

// The full parameter `p` (fp32, CPU), the same for a given (seed, p.name) wherever it is asked for.
at::Tensor init_param(const ParamInfo& p, const ModelSpec& spec, uint64_t seed, const InitOptions& options = {});

// Every parameter of the model, full (fp32, CPU).
std::map<std::string, at::Tensor> init_full_params(const ModelSpec& spec, HeadKind head, uint64_t seed,
                                                   const InitOptions& options = {});

// Only the shards that (tp_rank of tp_size, stage of pp, ep_rank of ep) holds, equal to
// shard_of(init_full_params(...)). Each full parameter is drawn and sliced one at a time (a sequential
// generator cannot skip ahead), so the peak extra memory is one full parameter, never the model.
std::map<std::string, at::Tensor> init_rank_params(const ModelSpec& spec, HeadKind head, uint64_t seed,
                                                   int tp_rank, int tp_size, int stage, int pp,
                                                   const InitOptions& options = {}, int ep_rank = 0,
                                                   int ep = 1);

}  // namespace realign::model
