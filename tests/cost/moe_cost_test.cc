// The mixture-of-experts terms of the cost model: active-parameter FLOPs, a hand-computable all-to-all,
// memory of every expert sharded by ep, the all-to-alls in a call's time, expert reads when decoding.
#include "cost/moe_cost.h"

#include <gtest/gtest.h>

#include "cost/call_cost.h"
#include "cost/fixtures.h"
#include "cost/transfer_cost.h"

namespace realign {
namespace {

using testing::assign;
using testing::make_cluster;
using testing::make_graph;

MfcAssignment with_ep(MfcAssignment a, int ep) {
  a.strategy.ep = ep;
  return a;
}

TEST(MoeCost, ForwardFlopsCountTheActivePath) {
  const ModelSpec m = builtin_model("qwen3-30b-a3b");
  // Per token and layer: q, k, v, o (2048 x 5120 + 4096 x 2048), the router (128 x 2048), 8 experts of
  // 3 x 2048 x 768; then the LM head 151936 x 2048.
  const double per_token = 48.0 * (18874368.0 + 262144.0 + 8 * 3 * 2048.0 * 768) + 151936.0 * 2048;
  EXPECT_DOUBLE_EQ(m.forward_flops(1000, 0), 2 * 1000 * per_token);
  EXPECT_DOUBLE_EQ(per_token, 3041656832.0);
}

TEST(MoeCost, AllToAllByHand) {
  const Link nvlink{1e-5, 1e11, nullptr, 1e-4}, ib{2e-5, 5e10, nullptr, 1e-4};
  // 8 ranks on one node: 7/8 of 800 MB leaves each rank, over NVLink.
  EXPECT_DOUBLE_EQ(alltoall_s(8e8, 8, 1.0, 8, nvlink, ib), 1e-4 + 1e-5 + 7e8 / 1e11);
  // The busiest rank moves 1.25x.
  EXPECT_DOUBLE_EQ(alltoall_s(8e8, 8, 1.25, 8, nvlink, ib), 1e-4 + 1e-5 + 1.25 * 7e8 / 1e11);
  // 16 ranks over two nodes: 7/16 to node peers over NVLink, 8/16 over InfiniBand at once; IB is slower.
  EXPECT_DOUBLE_EQ(alltoall_s(1.6e9, 16, 1.0, 8, nvlink, ib), 1e-4 + 2e-5 + 8e8 / 5e10);
  EXPECT_EQ(alltoall_s(8e8, 1, 1.0, 8, nvlink, ib), 0.0);
  // 4096 tokens of a tp group of 2: 2048 per rank, 8 copies of 2048 bf16 values each.
  EXPECT_DOUBLE_EQ(alltoall_bytes_per_rank(builtin_model("qwen3-30b-a3b"), 4096, 2), 2048.0 * 8 * 2048 * 2);
  EXPECT_DOUBLE_EQ(expert_load_factor(1), 1.0);
  EXPECT_DOUBLE_EQ(expert_load_factor(8), kExpertLoadImbalance);
}

TEST(MoeCost, MemoryHoldsEveryExpertShardedByEp) {
  const ModelSpec m = builtin_model("qwen3-30b-a3b");
  const auto params = model_params(m, HeadKind::kLanguageModel);
  const double all_experts = 48.0 * 128 * 3 * 2048 * 768;
  const ShardSizes one = shard_sizes(params, m.n_layers, 2, 1, 1),
                   eight = shard_sizes(params, m.n_layers, 2, 1, 8);
  // ep 1: tensor parallelism cuts every expert in half; ep 8: an eighth of the experts, whole.
  EXPECT_DOUBLE_EQ(double(one.stage_experts(0)), all_experts / 2);
  EXPECT_DOUBLE_EQ(double(eight.stage_experts(0)), all_experts / 8);
  EXPECT_DOUBLE_EQ(double(one.max() - eight.max()), all_experts * 3 / 8);

  // A train call on d16t2p1e8 with ZeRO-1: the rest's optimizer state over dp = 16, the experts' over
  // edp = 16 x 2 / 8 = 4.
  const DataflowGraph g = make_graph("grpo", "qwen3-30b-a3b", 64, 256, 1024, 4);
  const int train = g.mfc_index("actor_train");
  MfcAssignment a = with_ep(assign("actor_train", 0, 16, 2, 1, 1), 8);
  a.strategy.zero1 = true;
  const Cluster c = make_cluster(4, 8);
  const CallEstimate e = estimate_call(g, c, default_profile(c.device), train, a);
  const double experts = all_experts / 8, rest = double(eight.max()) - experts;
  EXPECT_DOUBLE_EQ(e.memory.weights, 2.0 * double(eight.max()));
  EXPECT_DOUBLE_EQ(e.memory.optimizer, rest * 12.0 / 16 + experts * 12.0 / 4);
}

TEST(MoeCost, EpAddsTheAllToAllsAndKeepsTheFlops) {
  const DataflowGraph g = make_graph("grpo", "qwen3-30b-a3b", 64, 256, 1024, 4);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = builtin_profile(c.device);
  const int inf = g.mfc_index("ref_inf");
  const MfcAssignment base = assign("ref_inf", 0, 8, 1, 1, 8);
  const CallEstimate e1 = estimate_call(g, c, p, inf, base),
                     e8 = estimate_call(g, c, p, inf, with_ep(base, 8));
  EXPECT_DOUBLE_EQ(e1.flops, e8.flops);
  // tp 1, one stage, no gradients: the only communication is the MoE layers' dispatch and combine, once per
  // micro-batch slot.
  const ModelSpec& m = g.model(Role::kRef).spec;
  const double mb_tokens = double(seqs_per_micro_batch(g.mfcs[size_t(inf)], base.strategy)) * (256 + 1024);
  const double a2a = alltoall_s(alltoall_bytes_per_rank(m, mb_tokens, 1), 8, kExpertLoadImbalance, 8,
                                intra_node_alltoall_link(p), inter_node_link(p));
  EXPECT_EQ(e1.comm_s, 0.0);
  EXPECT_NEAR(e8.comm_s, 8.0 * 48 * 2 * a2a, 1e-9 * e8.comm_s);
  // ep 8 holds an eighth of the experts: far less memory.
  EXPECT_LT(e8.memory.weights, e1.memory.weights / 4);
}

TEST(MoeCost, DecodingReadsOnlyTheExpertsItsTokensPick) {
  const ModelSpec m = builtin_model("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(experts_touched_fraction(m, 1), 8.0 / 128);
  EXPECT_GT(experts_touched_fraction(m, 512), 0.99);
  EXPECT_EQ(experts_touched_fraction(builtin_model("llama2-7b"), 512), 0.0);
}

TEST(MoeCost, ReallocationMovesOnlyTheExpertsARankLacks) {
  const ModelSpec m = builtin_model("moe-tiny");  // 2 layers of 8 experts, 32 wide, hidden 64
  const auto params = model_params(m, HeadKind::kLanguageModel);
  const double expert_bytes = 2.0 * 3 * 64 * 32;  // one expert of one layer, bf16
  const Layout all{0, 4, 1, 1, 1}, quarter{0, 4, 1, 1, 4}, half{0, 4, 1, 1, 2};
  // Every rank holds every expert: taking an ep 4 layout needs nothing.
  for (double b : realloc_inbound_bytes(params, m.n_layers, all, quarter)) EXPECT_EQ(b, 0.0);
  // From ep 4 (2 experts a rank) to every expert on every rank: 6 experts of each layer arrive.
  for (double b : realloc_inbound_bytes(params, m.n_layers, quarter, all)) EXPECT_EQ(b, 2 * 6 * expert_bytes);
  // ep 4 -> ep 2: rank r (ep rank r mod 2) needs experts [4(r mod 2), +4) and holds [2r, +2): ranks 0 and
  // 3 hold half of what they need, ranks 1 and 2 none of it.
  const std::vector<double> in = realloc_inbound_bytes(params, m.n_layers, quarter, half);
  EXPECT_EQ(in, (std::vector<double>{2 * 2 * expert_bytes, 2 * 4 * expert_bytes, 2 * 4 * expert_bytes,
                                     2 * 2 * expert_bytes}));
  // tp 2 with ep 1 holds half of every expert's inner dimension; ep 4 wants two whole experts: half of them
  // is there. The attention and norms keep their layout and do not move.
  const Layout cut{0, 2, 2, 1, 1}, spread{0, 2, 2, 1, 4};
  for (double b : realloc_inbound_bytes(params, m.n_layers, cut, spread)) EXPECT_EQ(b, 2 * expert_bytes);
}

}  // namespace
}  // namespace realign
