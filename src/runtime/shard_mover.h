// ShardMover: moves one model's parameter shards from the layout they live in to the layout a call runs
// with (and back), over the reallocation executor. Transfer plans are pure and cached per layout pair, so a
// run plans each move once.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "realloc/realloc_executor.h"

namespace realign::runtime {

class ShardMover {
 public:
  ShardMover(std::vector<ParamInfo> params, int64_t n_layers, at::ScalarType dtype);

  // Collective over every rank of `from` and `to` (group rank r = device r; ranks in neither may call it and
  // do nothing). `held`: this rank's shards in `from` (empty outside it). Returns its shards in `to` (empty
  // outside it). Moving to the same layout returns `held` itself (no copy).
  ShardMap move(comm::Group& global, const ShardMap& held, const Layout& from, const Layout& to,
                ReallocStats* stats = nullptr);

  const std::vector<ParamInfo>& params() const { return params_; }

 private:
  std::vector<ParamInfo> params_;
  int64_t n_layers_;
  at::ScalarType dtype_;
  std::map<std::pair<std::string, std::string>, TransferPlan> plans_;
};

}  // namespace realign::runtime
