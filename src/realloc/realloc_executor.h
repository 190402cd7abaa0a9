// Executes a TransferPlan over comm: every rank passes the shards it holds in the source layout (name ->
// tensor, shapes tp_shard_shape; empty when outside it) and gets the shards of its destination layout
// (empty when outside it). Local copies for what a rank already holds; everything else through
// non-blocking point-to-point messages (realloc/message_exchange.h), large slices cut into chunks, sent
// straight from and received straight into the shards when the slice is contiguous there.
//
// Contract: `group` ranks are global device indices (World::global(), or any group where rank r is device
// r) and cover both layouts; every rank in either layout calls this with the same plan (ranks in neither
// may call it too; they do nothing). Any dtype (bytes move unchanged).
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "comm/group.h"
#include "graph/param_layout.h"
#include "realloc/transfer_plan.h"

namespace realign {

using ShardMap = std::map<std::string, at::Tensor>;

struct ReallocOptions {
  at::ScalarType dtype = at::kFloat;       // of every shard; source shards must have it
  int64_t chunk_bytes = int64_t(4) << 20;  // slices above this move in several messages
  int64_t window_bytes = int64_t(64) << 20;  // in flight per rank (bounds staging memory)
};

struct ReallocStats {
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  int64_t bytes_copied = 0;  // local copies
  int64_t messages = 0;
};

// Throws realign::Error when a source shard this rank must hold is missing or has the wrong shape/dtype.
ShardMap execute_reallocation(comm::Group& group, const TransferPlan& plan, const std::vector<ParamInfo>& params,
                              int64_t n_layers, const ShardMap& source, const ReallocOptions& options = {},
                              ReallocStats* stats = nullptr);

}  // namespace realign
