// The pure reallocation plan: exact coverage, minimality and load spreading over many random layout pairs.
#include "realloc/transfer_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "cost/transfer_cost.h"
#include "realloc/plan_test_util.h"

namespace realign {
namespace {

struct Case {
  ModelSpec spec;
  HeadKind head;
};

// Checks every invariant of `plan`; `out` gets the outbound elements per sender.
void check_plan(const std::vector<ParamInfo>& params, int64_t n_layers, const TransferPlan& plan,
                const std::string& what, std::vector<int64_t>* out_load = nullptr) {
  const Layout& from = plan.from;
  const Layout& to = plan.to;
  // Coverage count per destination rank, per parameter, per position along the slice dim.
  std::map<std::pair<int, int>, std::vector<int>> cover;
  for (int d = to.first_device; d < to.first_device + to.size(); ++d)
    for (size_t i = 0; i < params.size(); ++i) {
      const Range need = held_slice(params[i], n_layers, to, d);
      if (need.size() > 0) cover[{d, int(i)}].assign(size_t(need.size()), 0);
    }
  std::vector<int64_t> out(size_t(std::max(from.first_device + from.size(), to.first_device + to.size())), 0);
  int64_t moved = 0, minimum = 0;
  auto apply = [&](const SliceTransfer& t, bool local) {
    const ParamInfo& p = params[size_t(t.param)];
    ASSERT_EQ(t.dim, slice_dim(p)) << what;
    ASSERT_EQ(local, t.src == t.dst) << what;
    const Range src_held = held_slice(p, n_layers, from, t.src);
    const Range dst_held = held_slice(p, n_layers, to, t.dst);
    ASSERT_GT(t.range.size(), 0) << what;
    ASSERT_TRUE(t.range.begin >= src_held.begin && t.range.end <= src_held.end)
        << what << ": rank " << t.src << " does not hold " << p.name << " [" << t.range.begin << ", "
        << t.range.end << ")";
    ASSERT_EQ(t.src_offset, t.range.begin - src_held.begin) << what;
    ASSERT_EQ(t.dst_offset, t.range.begin - dst_held.begin) << what;
    ASSERT_EQ(t.numel, t.range.size() * (p.numel() / p.shape[size_t(t.dim)])) << what << " " << p.name;
    if (p.split_dim >= 0) {
      EXPECT_EQ(t.range.begin % p.split_unit, 0) << what << " " << p.name;
      EXPECT_EQ(t.range.end % p.split_unit, 0) << what << " " << p.name;
    }
    auto it = cover.find({t.dst, t.param});
    ASSERT_NE(it, cover.end()) << what << ": rank " << t.dst << " does not need " << p.name;
    for (int64_t k = t.range.begin; k < t.range.end; ++k) ++it->second[size_t(k - dst_held.begin)];
    if (!local) {
      moved += t.numel;
      out[size_t(t.src)] += t.numel;
    }
  };
  for (const auto& t : plan.local_copies) apply(t, true);
  for (const auto& t : plan.transfers) apply(t, false);
  for (const auto& [key, counts] : cover)
    for (size_t k = 0; k < counts.size(); ++k)
      ASSERT_EQ(counts[k], 1) << what << ": rank " << key.first << " " << params[size_t(key.second)].name
                              << " position " << k;
  // Minimality: what each destination lacks, counted independently.
  for (int d = to.first_device; d < to.first_device + to.size(); ++d)
    for (const ParamInfo& p : params) {
      const Range need = held_slice(p, n_layers, to, d), have = held_slice(p, n_layers, from, d);
      const int64_t common = std::max<int64_t>(0, std::min(need.end, have.end) - std::max(need.begin, have.begin));
      minimum += (need.size() - common) * (p.numel() / p.shape[size_t(slice_dim(p))]);
    }
  EXPECT_EQ(moved, plan.elements_moved) << what;
  EXPECT_EQ(minimum, plan.elements_minimum) << what;
  EXPECT_EQ(plan.elements_moved, plan.elements_minimum) << what;
  // The planner's cost model counts the same bytes (bf16, 2 bytes an element).
  const auto inbound = realloc_inbound_bytes(params, n_layers, from, to);
  EXPECT_EQ(std::accumulate(inbound.begin(), inbound.end(), 0.0), double(plan.elements_minimum) * 2) << what;
  if (out_load) *out_load = out;
}

TEST(TransferPlan, RandomPairsCoverEveryElementOnceAndMoveTheMinimum) {
  std::vector<Case> cases = {{builtin_model("llama-tiny"), HeadKind::kLanguageModel},
                             {builtin_model("gpt2-tiny"), HeadKind::kLanguageModel},
                             {testing::gpt2_odd(), HeadKind::kLanguageModel},
                             {builtin_model("llama-tiny"), HeadKind::kValue}};
  Rng rng(7);
  int pairs = 0;
  for (const Case& c : cases) {
    const auto params = model_params(c.spec, c.head);
    for (int k = 0; k < 150; ++k) {
      const int world = k % 3 == 0 ? 16 : 8;
      // Any tp, including ones that cut no head boundary evenly (5, 7) and more ranks than KV heads.
      const Layout from = testing::random_layout(rng, world, {1, 2, 3, 4, 5, 8}, 4);
      const Layout to = testing::random_layout(rng, world, {1, 2, 3, 4, 6, 7}, 4);
      const std::string what = c.spec.name + " " + to_string(from) + " -> " + to_string(to);
      check_plan(params, c.spec.n_layers, plan_reallocation(params, c.spec.n_layers, from, to), what);
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 600);
}

TEST(TransferPlan, SameLayoutMovesNothing) {
  const ModelSpec spec = builtin_model("gpt2-tiny");
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  const Layout l = parse_layout("d2t2p2@1");
  const TransferPlan plan = plan_reallocation(params, spec.n_layers, l, l);
  EXPECT_TRUE(plan.transfers.empty());
  EXPECT_EQ(plan.elements_moved, 0);
  EXPECT_FALSE(plan.local_copies.empty());
}

TEST(TransferPlan, NonDividingTpSizesIntersectShardRanges) {
  // tp 2 -> tp 3 on 6 heads (unit 8 rows): shard boundaries 0|24|48 and 0|16|32|48 rows of q.
  const ModelSpec spec = testing::gpt2_odd();
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  const TransferPlan plan = plan_reallocation(params, spec.n_layers, parse_layout("d1t2p1"), parse_layout("d1t3p1@2"));
  std::vector<std::pair<int64_t, int64_t>> q;  // (begin, end) of layers.0.attn.q.weight slices to rank 3
  for (const auto& t : plan.transfers)
    if (params[size_t(t.param)].name == "layers.0.attn.q.weight" && t.dst == 3)
      q.push_back({t.range.begin, t.range.end});
  std::sort(q.begin(), q.end());
  EXPECT_EQ(q, (std::vector<std::pair<int64_t, int64_t>>{{16, 24}, {24, 32}}));
}

TEST(TransferPlan, SendingIsSpreadOverSourceReplicas) {
  const ModelSpec spec = builtin_model("llama-small");
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  struct Pair {
    const char *from, *to;
    int senders;
  };
  for (const Pair& pr : {Pair{"d4t1p1", "d1t1p1@4", 4}, Pair{"d2t1p1", "d2t1p1@2", 2},
                         Pair{"d2t2p1", "d1t4p1@4", 4}, Pair{"d4t1p2", "d2t2p1@8", 8}}) {
    const TransferPlan plan =
        plan_reallocation(params, spec.n_layers, parse_layout(pr.from), parse_layout(pr.to));
    std::vector<int64_t> out;
    check_plan(params, spec.n_layers, plan, std::string(pr.from) + " -> " + pr.to, &out);
    const int64_t most = *std::max_element(out.begin(), out.end());
    const double fair = double(plan.elements_moved) / pr.senders;
    EXPECT_LE(double(most), fair * 1.02) << pr.from << " -> " << pr.to << ": busiest sender " << most
                                         << " elements, fair share " << fair;
  }
}

TEST(TransferPlan, NoWorseSpreadThanTheCostModelsReplicaRule) {
  // The cost model sends each missing slice from source replica (dst dp mod src dp); the plan balances
  // greedily and should not leave its busiest sender busier than that rule does (over random pairs).
  const ModelSpec spec = builtin_model("llama-small");
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  Cluster cluster;
  cluster.n_nodes = 1;
  cluster.devices_per_node = 16;
  cluster.device = builtin_device("h100-sxm", "device");
  const HardwareProfile profile = default_profile(cluster.device);
  Rng rng(11);
  int better = 0;
  for (int k = 0; k < 80; ++k) {
    const Layout from = testing::random_layout(rng, 16, {1, 2, 4}, 4);
    const Layout to = testing::random_layout(rng, 16, {1, 2, 4}, 4);
    const std::string what = to_string(from) + " -> " + to_string(to);
    const TransferPlan plan = plan_reallocation(params, spec.n_layers, from, to);
    std::vector<int64_t> out;
    check_plan(params, spec.n_layers, plan, what, &out);
    const double most = double(*std::max_element(out.begin(), out.end())) * 2;  // bf16 bytes
    const double rule = realloc_cost(params, spec.n_layers, from, to, cluster, profile).max_outbound;
    EXPECT_LE(most, rule * 1.01 + 4096) << what;
    better += most < rule * 0.99;
  }
  EXPECT_GT(better, 10);
}

}  // namespace
}  // namespace realign
