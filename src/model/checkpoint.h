// HF model directories (config.json + safetensors, sharded or not) loaded into the canonical shards one rank
// holds, and full canonical parameters saved as one.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>

#include "graph/param_layout.h"
#include "tensorfile/dtype.h"

namespace realign::model {

// Which part of the model a rank holds: tp rank / size, pipeline stage / stage count, and the expert-parallel
// rank / degree (ep > 1: whole experts, model/shard.h).
struct RankSlice {
  int tp_rank = 0, tp_size = 1;
  int stage = 0, pp = 1;
  int ep_rank = 0, ep = 1;
};

struct LoadOptions {
  // A critic / reward model loaded from a language-model checkpoint has no value head: it is initialised
  // (init_param with this seed). Set false to require one in the checkpoint.
  bool init_missing_value_head = true;
  uint64_t value_head_seed = 0;
};

// Canonical name -> this rank's shard (CPU, `dtype`), for every parameter (tp, pp) holds. Each HF tensor is
// copied out of the memory map one at a time and sliced, so peak extra memory is one full tensor. Throws Error
// naming the directory and tensor when one is missing or has the wrong shape.
std::map<std::string, at::Tensor> load_hf_shards(const std::string& dir, const ModelSpec& spec, HeadKind head,
                                                 const RankSlice& slice, at::ScalarType dtype,
                                                 const LoadOptions& options = {});

// The whole model (a single rank's view, tp = pp = 1).
std::map<std::string, at::Tensor> load_hf_full(const std::string& dir, const ModelSpec& spec, HeadKind head,
                                               at::ScalarType dtype, const LoadOptions& options = {});

// Writes `dir` (created if needed): config.json (with torch_dtype) and model.safetensors, or numbered shards
// and model.safetensors.index.json when larger than `max_shard_bytes`. `full` holds every parameter of
// (spec, head) in canonical names (checked), floating tensors are written as `on_disk` (F32, F16 or BF16).
void save_hf_checkpoint(const std::string& dir, const ModelSpec& spec, HeadKind head,
                        const std::map<std::string, at::Tensor>& full, tensorfile::DType on_disk,
                        size_t max_shard_bytes = size_t(4) << 30);

}  // namespace realign::model
