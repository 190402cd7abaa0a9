#include "model/shard.h"

#include <ATen/ATen.h>

#include "core/check.h"
#include "plan/expert_parallel.h"

namespace realign::model {

at::Tensor shard_of(const at::Tensor& full, const ParamInfo& p, int tp_rank, int tp_size) {
  REALIGN_CHECK(full.sizes().vec() == p.shape) << p.name << ": tensor " << full.sizes() << " vs param shape";
  if (p.split_dim < 0) return full;
  const Range r = tp_shard_range(p, tp_rank, tp_size);
  return full.narrow(p.split_dim, r.begin, r.size());
}

at::Tensor shard_of(const at::Tensor& full, const ParamInfo& p, int tp_rank, int tp_size, int ep_rank,
                    int ep) {
  if (!p.expert || experts_cut_by_tp(ep)) return shard_of(full, p, tp_rank, tp_size);
  REALIGN_CHECK(full.sizes().vec() == p.shape) << p.name << ": tensor " << full.sizes() << " vs param shape";
  const Range r = ep_shard_range(p, ep_rank, ep);
  return full.narrow(0, r.begin, r.size());
}

std::vector<int64_t> shard_shape(const ParamInfo& p, int tp_rank, int tp_size, int ep_rank, int ep) {
  if (!p.expert || experts_cut_by_tp(ep)) return tp_shard_shape(p, tp_rank, tp_size);
  std::vector<int64_t> shape = p.shape;
  shape[0] = ep_shard_range(p, ep_rank, ep).size();
  return shape;
}

at::Tensor unshard(const std::vector<at::Tensor>& shards, const ParamInfo& p) {
  REALIGN_CHECK(!shards.empty()) << p.name;
  const int tp = int(shards.size());
  for (int r = 0; r < tp; ++r)
    REALIGN_CHECK(shards[r].sizes().vec() == tp_shard_shape(p, r, tp))
        << p.name << ": shard " << r << " of " << tp << " has shape " << shards[r].sizes();
  if (p.split_dim < 0) return shards[0];
  return at::cat(shards, p.split_dim);
}

}  // namespace realign::model
