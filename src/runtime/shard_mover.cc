#include "runtime/shard_mover.h"

namespace realign::runtime {

ShardMover::ShardMover(std::vector<ParamInfo> params, int64_t n_layers, at::ScalarType dtype)
    : params_(std::move(params)), n_layers_(n_layers), dtype_(dtype) {}

ShardMap ShardMover::move(comm::Group& global, const ShardMap& held, const Layout& from, const Layout& to,
                          ReallocStats* stats) {
  if (from == to) return held;
  const auto key = std::make_pair(to_string(from), to_string(to));
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, plan_reallocation(params_, n_layers_, from, to)).first;
  ReallocOptions options;
  options.dtype = dtype_;
  // The executor reads the source shards as plain tensors; detaching keeps autograd out of the copies.
  ShardMap source;
  for (const auto& [name, tensor] : held) source[name] = tensor.detach();
  return execute_reallocation(global, it->second, params_, n_layers_, source, options, stats);
}

}  // namespace realign::runtime
