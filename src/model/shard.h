// The one mapping between a full parameter and its tensor-parallel shard (loading, saving, initialisation
// and parameter reallocation all go through it). Built on graph's tp_shard_range: uneven vocabulary splits
// and split_unit (whole heads) are handled there.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "graph/param_layout.h"

namespace realign::model {

// The slice of `full` (shape p.shape) held by tp rank `tp_rank` of `tp_size`: a view (no copy) along
// p.split_dim; replicated parameters return `full` itself.
at::Tensor shard_of(const at::Tensor& full, const ParamInfo& p, int tp_rank, int tp_size);

// The same on a rank of an expert-parallel layout (plan/expert_parallel.h): with ep > 1 an expert stack is
// cut along its experts (ep_shard_range of `ep_rank`), whole along its inner dimension; any other parameter,
// and every parameter with ep = 1, as above.
at::Tensor shard_of(const at::Tensor& full, const ParamInfo& p, int tp_rank, int tp_size, int ep_rank,
                    int ep);
std::vector<int64_t> shard_shape(const ParamInfo& p, int tp_rank, int tp_size, int ep_rank, int ep);

// The full parameter from every tp rank's shard, in rank order (shards.size() is the tp size). Replicated
// parameters return shards[0] (all ranks hold the same values).
at::Tensor unshard(const std::vector<at::Tensor>& shards, const ParamInfo& p);

}  // namespace realign::model
