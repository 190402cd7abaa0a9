// The reallocation cost's shortcuts (parameters grouped alike, per-pattern pieces, the simulator's cache
// keyed on layouts shifted to the first node) against the straightforward computation: every parameter of
// every destination device, its missing rows and their sender by the rule transfer_cost.h states, summed per
// device. Byte counts are whole numbers far below 2^53, so the sums are exact in any order and the two must
// agree to the bit.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/rng.h"
#include "cost/comm_model.h"
#include "cost/fixtures.h"
#include "cost/simulator.h"
#include "cost/transfer_cost.h"
#include "plan/held_slice.h"
#include "testing/random_layout.h"

namespace realign {
namespace {

using testing::make_cluster;
using testing::random_layout;

struct Load {
  double intra = 0, inter = 0;
  double total() const { return intra + inter; }
};

TransferCost straightforward_realloc_cost(const std::vector<ParamInfo>& params, int64_t n_layers,
                                          const Layout& src, const Layout& dst, const Cluster& cluster,
                                          const HardwareProfile& profile) {
  TransferCost c;
  if (src == dst) return c;
  std::vector<Load> in(size_t(cluster.n_devices())), out(size_t(cluster.n_devices()));
  auto send = [&](int from, int to, double bytes) {
    const bool inter = cluster.node_of(from) != cluster.node_of(to);
    c.crosses_nodes |= inter;
    (inter ? in[size_t(to)].inter : in[size_t(to)].intra) += bytes;
    (inter ? out[size_t(from)].inter : out[size_t(from)].intra) += bytes;
    c.bytes += bytes;
  };
  for (int d = dst.first_device; d < dst.first_device + dst.size(); ++d) {
    const Layout::Coord dc = dst.coord_of(d);
    for (const ParamInfo& p : params) {
      const Range need = held_slice(p, n_layers, dst, dc);
      const Range have = held_slice(p, n_layers, src, d);
      const double row_bytes = double(p.numel() / p.shape[size_t(slice_dim(p))]) * 2;
      // The source stage that sends p: its first holder.
      int stage = 0;
      if (p.layer == ParamInfo::kHead) stage = src.pp - 1;
      if (p.layer >= 0)
        while (!stage_holds(p, stage, src.pp, n_layers)) ++stage;
      const int replica = dc.dp % src.dp;
      for (int64_t row = need.begin; row < need.end; ++row) {
        if (row >= have.begin && row < have.end) continue;
        int t = p.split_dim < 0 ? dc.tp % src.tp : 0;
        if (p.split_dim >= 0)
          while (!(row >= tp_shard_range(p, t, src.tp).begin && row < tp_shard_range(p, t, src.tp).end)) ++t;
        send(src.device_of({replica, t, stage}), d, row_bytes);
      }
    }
  }
  if (c.bytes <= 0) return c;
  const Link intra = intra_node_link(profile), inter = inter_node_link(profile);
  double worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    c.max_inbound = std::max(c.max_inbound, in[i].total());
    c.max_outbound = std::max(c.max_outbound, out[i].total());
    for (const Load& l : {in[i], out[i]})
      worst = std::max(worst, l.intra / intra.bandwidth + l.inter / inter.bandwidth);
  }
  c.latency_s = c.crosses_nodes ? inter.latency_s : intra.latency_s;
  c.time_s = worst + c.latency_s;
  return c;
}

void expect_same(const TransferCost& a, const TransferCost& b, const std::string& what) {
  EXPECT_EQ(a.bytes, b.bytes) << what;
  EXPECT_EQ(a.max_inbound, b.max_inbound) << what;
  EXPECT_EQ(a.max_outbound, b.max_outbound) << what;
  EXPECT_EQ(a.crosses_nodes, b.crosses_nodes) << what;
  EXPECT_EQ(a.time_s, b.time_s) << what;
  EXPECT_EQ(a.latency_s, b.latency_s) << what;
}

ModelSpec odd_gpt2() {
  ModelSpec s = builtin_model("gpt2-tiny");  // an odd vocabulary (uneven over any tp > 1), 6 heads, 3 layers
  s.vocab = 251;
  s.n_layers = 3;
  s.hidden = 48;
  s.n_heads = 6;
  s.n_kv_heads = 6;
  return s;
}

TEST(ReallocCostExact, EqualsThePerDeviceSumsOnRandomLayouts) {
  const Cluster cluster = make_cluster(8, 4);  // node boundaries every 4 devices
  const HardwareProfile profile = default_profile(cluster.device);
  Rng rng(5);
  int moved = 0;
  for (const ModelSpec& spec : {builtin_model("llama-tiny"), odd_gpt2(), builtin_model("gpt2-tiny")})
    for (HeadKind head : {HeadKind::kLanguageModel, HeadKind::kValue}) {
      const auto params = model_params(spec, head);
      for (int k = 0; k < 60; ++k) {
        const Layout src = random_layout(rng, 32, {1, 2, 3, 4, 8}, 4);
        const Layout dst = random_layout(rng, 32, {1, 2, 4, 6}, 4);
        const TransferCost fast = realloc_cost(params, spec.n_layers, src, dst, cluster, profile);
        expect_same(fast, straightforward_realloc_cost(params, spec.n_layers, src, dst, cluster, profile),
                    spec.name + " " + to_string(src) + " -> " + to_string(dst));
        moved += fast.bytes > 0;
      }
    }
  EXPECT_GT(moved, 300);  // the pairs do move parameters (not only identical layouts)
}

TEST(ReallocCostExact, LayoutsShiftedByWholeNodesCostTheSameAndTheSimulatorCachesThem) {
  const Cluster cluster = make_cluster(8, 4);
  const HardwareProfile profile = default_profile(cluster.device);
  const DataflowGraph graph = testing::make_graph("ppo", "llama-tiny", 8, 16, 16);
  Simulator simulator(graph, cluster, profile);
  const auto params = model_params(graph.models[0].spec, graph.models[0].head);
  const int64_t n_layers = graph.models[0].spec.n_layers;
  Rng rng(9);
  for (int k = 0; k < 100; ++k) {
    const Layout src = random_layout(rng, 16, {1, 2, 4}, 4), dst = random_layout(rng, 16, {1, 2, 4}, 4);
    const std::string what = to_string(src) + " -> " + to_string(dst);
    const TransferCost direct = realloc_cost(params, n_layers, src, dst, cluster, profile);
    for (int nodes : {1, 2, 4}) {
      Layout s = src, d = dst;
      s.first_device += 4 * nodes;
      d.first_device += 4 * nodes;
      expect_same(realloc_cost(params, n_layers, s, d, cluster, profile), direct, what);
      expect_same(simulator.realloc(0, s, d), direct, what);
    }
    expect_same(simulator.realloc(0, src, dst), direct, what);
  }
}

}  // namespace
}  // namespace realign
