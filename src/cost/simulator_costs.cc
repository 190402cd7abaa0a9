// The simulator's memoised prices (cost/simulator.h): a call's estimate, a reallocation's and a data move's
// cost, each cached under the figures it depends on, so a search that meets a layout again prices it once.
#include <algorithm>

#include "core/check.h"
#include "cost/simulator.h"

namespace realign {

size_t Simulator::KeyHash::operator()(const Key& k) const {
  // splitmix64-style mixing of the three words.
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int64_t w : {k.a, k.b, k.c}) {
    h ^= uint64_t(w) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return size_t(h);
}

int64_t Simulator::pack(const Layout& l) {
  // 20 bits of first device, 16 of dp, 10 of tp, 8 of pp, 9 of ep.
  REALIGN_CHECK(l.first_device < (1 << 20) && l.dp < (1 << 16) && l.tp < (1 << 10) && l.pp < (1 << 8) &&
                l.ep < (1 << 9))
      << "layout " << to_string(l) << " is beyond the simulator's cache keys";
  return int64_t(l.first_device) | (int64_t(l.dp) << 20) | (int64_t(l.tp) << 36) | (int64_t(l.pp) << 46) |
         (int64_t(l.ep) << 54);
}

const ShardSizes& Simulator::shards(int model, int tp, int pp, int ep) {
  const Key key{model | (int64_t(ep) << 32), tp, pp};
  auto it = shards_.find(key);
  if (it != shards_.end()) return it->second;
  return shards_
      .emplace(key,
               shard_sizes(params_[size_t(model)], graph_.models[size_t(model)].spec.n_layers, tp, pp, ep))
      .first->second;
}

const CallEstimate& Simulator::call_estimate(int i, const MfcAssignment& a) {
  const bool spans = mesh_spans_nodes(a.mesh, cluster_);
  const Strategy& s = a.strategy;
  // A mesh and its dp fit in 21 bits each (kMaxDevices), cp in 20 (plan_from_json's limit).
  REALIGN_CHECK(a.mesh.size < (1 << 21) && s.dp < (1 << 21) && s.cp < (1 << 20)) << to_string(s);
  const Key key{int64_t(i) | (int64_t(spans) << 32) | (int64_t(s.ep) << 33),
                int64_t(a.mesh.size) | (int64_t(s.dp) << 21) | (int64_t(s.cp) << 42) |
                    (int64_t(s.cp_kind == ContextParallel::kUlysses) << 62),
                int64_t(s.tp) | (int64_t(s.pp) << 16) | (int64_t(s.micro_batches) << 32) |
                    (int64_t(s.zero1) << 62) | (int64_t(s.recompute) << 61)};
  auto it = calls_.find(key);
  if (it != calls_.end()) return it->second;
  return calls_.emplace(key, estimate(i, a, 0)).first->second;
}

CallEstimate Simulator::estimate(int i, const MfcAssignment& a, double busy_ranks) {
  const int m = call_model_[size_t(i)];
  const Strategy& s = a.strategy;
  const Mfc& mfc = graph_.mfcs[size_t(i)];
  const bool generates = mfc.kind() == MfcKind::kGenerate;
  const HardwareProfile& profile = generates && generation_profile_ ? *generation_profile_
                                   : !generates && pass_profile_    ? *pass_profile_
                                                                    : profile_;
  CallEstimate e = estimate_call(graph_.models[size_t(m)], mfc, s, mesh_spans_nodes(a.mesh, cluster_),
                                 cluster_.devices_per_node, profile, shards(m, s.tp, s.pp, s.ep), busy_ranks);
  if (const double fixed = fixed_time_[size_t(i)]; fixed >= 0) {
    e.time_s = e.compute_s = fixed;
    e.comm_s = e.overhead_s = 0;
  }
  return e;
}

std::pair<Layout, Layout> Simulator::to_first_node(Layout src, Layout dst) const {
  const int node = std::min(src.first_device, dst.first_device) / cluster_.devices_per_node;
  src.first_device -= node * cluster_.devices_per_node;
  dst.first_device -= node * cluster_.devices_per_node;
  return {src, dst};
}

const TransferCost& Simulator::realloc(int model, const Layout& src, const Layout& dst) {
  const auto [s, d] = to_first_node(src, dst);
  const Key key{model, pack(s), pack(d)};
  auto it = reallocs_.find(key);
  if (it != reallocs_.end()) return it->second;
  const TransferCost c = realloc_cost(params_[size_t(model)], graph_.models[size_t(model)].spec.n_layers, s,
                                      d, cluster_, profile_);
  return reallocs_.emplace(key, c).first->second;
}

const TransferCost& Simulator::data_move(int data, int64_t n_seqs, const Layout& src, const Layout& dst,
                                         int64_t segments) {
  REALIGN_CHECK(data < (1 << 16) && n_seqs < (int64_t(1) << 32) && segments < (1 << 15))
      << "data move beyond the simulator's cache keys";
  const auto [s, d] = to_first_node(src, dst);
  const Key key{int64_t(data) | (n_seqs << 16) | (segments << 48), pack(s), pack(d)};
  auto it = data_.find(key);
  if (it != data_.end()) return it->second;
  const TransferCost c =
      data_move_cost(n_seqs, graph_.data[size_t(data)].bytes_per_seq, s, d, cluster_, profile_, segments);
  return data_.emplace(key, c).first->second;
}

}  // namespace realign
