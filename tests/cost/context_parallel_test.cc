// Context parallelism's price (cost/context_parallel.h, call_cost.cc): a rank's share of the tokens, the K/V
// ring's exposed hops, Ulysses's all-to-alls and the gradient reduction over dp x cp, by hand.
#include "cost/context_parallel.h"

#include <gtest/gtest.h>

#include "cost/call_cost.h"
#include "cost/fixtures.h"
#include "cost/moe_cost.h"

namespace realign {
namespace {

using testing::make_cluster;
using testing::make_graph;

Strategy with_cp(Strategy s, int cp, ContextParallel kind = ContextParallel::kRing) {
  s.cp = cp;
  s.cp_kind = kind;
  return s;
}

// Every kernel at one rate whatever its shape, and launches, host work and memory-bound passes free: a call's
// compute is its FLOPs over that rate.
HardwareProfile flat_rates(const Cluster& c) {
  HardwareProfile p = testing::free_transfers(c);
  for (Coefficient* k : {&p.gemm_efficiency, &p.gemm_depth_efficiency, &p.attention_efficiency}) {
    k->points.clear();
    k->value = 0.5;
  }
  for (Coefficient* k : {&p.layer_launch_overhead_s, &p.call_overhead_s, &p.step_overhead_s}) k->value = 0;
  p.memory_bandwidth.value = 1e30;
  return p;
}

CallEstimate train_estimate(const DataflowGraph& g, const Cluster& c, const HardwareProfile& p,
                            const Strategy& s) {
  const int i = g.mfc_index("actor_train");
  return estimate_call(g, c, p, i, MfcAssignment{"actor_train", DeviceMesh{0, s.dp * s.tp * s.pp * s.cp}, s});
}

// cp 2 gives each rank half of every sequence: half its GEMM and attention FLOPs (its queries still attend
// over the whole sequence) and half its activations.
TEST(ContextParallelCost, TwoRanksHalveATrainCallsComputeAndActivations) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 8, 256, 256);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = flat_rates(c);
  const CallEstimate one = train_estimate(g, c, p, Strategy{1, 1, 1, 2});
  const CallEstimate two = train_estimate(g, c, p, with_cp(Strategy{1, 1, 1, 2}, 2));
  EXPECT_NEAR(two.compute_s / one.compute_s, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(two.memory.activations, one.memory.activations / 2);
  EXPECT_EQ(two.memory.weights, one.memory.weights);  // replicated over cp as over dp
  EXPECT_DOUBLE_EQ(two.flops, one.flops);             // the call's work is the same
  // Ulysses splits the same tokens.
  const CallEstimate ulysses =
      train_estimate(g, c, p, with_cp(Strategy{1, 1, 1, 2}, 2, ContextParallel::kUlysses));
  EXPECT_NEAR(ulysses.compute_s / one.compute_s, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(ulysses.memory.activations, one.memory.activations / 2);
}

TEST(ContextParallelCost, TheRingsHopsShowWhereTheyOutlastTheAttention) {
  // llama2-7b: 32 KV heads of 128, bf16 keys and values: 16 KiB a token; over tp 2, half.
  const ModelSpec m = builtin_model("llama2-7b");
  EXPECT_EQ(ring_kv_bytes_per_token(m, 1), 2.0 * 32 * 128 * 2);
  EXPECT_EQ(ring_kv_bytes_per_token(m, 2), 32.0 * 128 * 2);
  const Link link{0, 1e9};  // 1 GB/s, no latency
  // Forward, cp 4: 3 hops of a 1 MB chunk (1 ms each) against a quarter of 2 ms of attention: 0.5 ms each.
  EXPECT_DOUBLE_EQ(ring_exposed_s(1e6, 2e-3, 4, link, false), 3 * 0.5e-3);
  // Backward: the chunk and its gradient (2 ms a hop) against the backward's 4 ms: 1 ms each.
  EXPECT_DOUBLE_EQ(ring_exposed_s(1e6, 4e-3, 4, link, true), 3 * 1e-3);
  // Hidden behind enough attention; nothing with one rank.
  EXPECT_EQ(ring_exposed_s(1e6, 8e-3, 4, link, false), 0);
  EXPECT_EQ(ring_exposed_s(1e6, 0, 1, link, false), 0);
}

// A train call's communication with cp 2 on one node, attention made free so that every hop is exposed: per
// layer, the forward's hop of the rank's K/V chunk and the backward's of the chunk and its gradient; once a
// step, the gradient all-reduce and the loss's scalars over the dp x cp = 2 ranks.
TEST(ContextParallelCost, ARingTrainCallPaysItsHopsAndReducesGradientsOverDpTimesCp) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 8, 256, 256);
  const Cluster c = make_cluster(1, 8);
  HardwareProfile p = flat_rates(c);
  p.attention_efficiency.value = 1e12;
  p.intra_node_bandwidth.points.clear();
  p.intra_node_bandwidth.value = 100e9;
  const Link link = intra_node_link(p);
  const CallEstimate e = train_estimate(g, c, p, with_cp(Strategy{1, 1, 1, 1}, 2));
  const ModelRole& actor = g.model(Role::kActor);
  const double params = double(shard_sizes(model_params(actor.spec, actor.head), 32, 1, 1).max());
  const double chunk = 8.0 * 512 / 2 * ring_kv_bytes_per_token(actor.spec, 1);  // 8 sequences, half each
  const double ring = 32 * (p2p_s(chunk, link) + p2p_s(2 * chunk, link));
  // A policy update's scalars: 2 a step and 3 a call (call_cost.cc).
  const double reduce = ring_allreduce_s(params * 2.0, 2, link) + 5 * ring_allreduce_s(8.0, 2, link);
  EXPECT_NEAR(e.comm_s, ring + reduce, 1e-6 * (ring + reduce));
  // The same reduction as dp 2 on the same devices, which splits sequences instead of tokens.
  const CallEstimate dp2 = train_estimate(g, c, p, Strategy{2, 1, 1, 1});
  EXPECT_NEAR(dp2.comm_s, reduce, 1e-6 * reduce);
}

TEST(ContextParallelCost, UlyssesMovesQKVAndTheOutputFourAllToAllsALayer) {
  const ModelSpec m = builtin_model("llama2-7b");  // 32 heads and 32 KV heads of 128
  const Link intra{0, 1e9}, inter{0, 1e8};
  // 1,000 tokens of 4,096 bf16 elements each for q, k, v and the output; 3/4 of each leave the rank.
  const double each = 1000 * 4096 * 2 * 0.75 / 1e9;
  EXPECT_DOUBLE_EQ(ulysses_layer_s(m, 1000, 1, 4, 8, intra, inter), 4 * each);
  EXPECT_EQ(ulysses_layer_s(m, 1000, 1, 1, 8, intra, inter), 0);
  // A group across two nodes of 2 ranks: each rank sends 1/4 over NVLink and 2/4 over the NIC at once.
  EXPECT_DOUBLE_EQ(ulysses_layer_s(m, 1000, 1, 4, 2, intra, inter), 4 * (1000 * 4096 * 2 * 0.5 / 1e8));
}

TEST(ContextParallelCost, ZeroShardsTheOptimizerOverDpTimesCp) {
  Strategy s = with_cp(Strategy{2, 1, 1, 1, true, false}, 2);
  EXPECT_EQ(optimizer_bytes_per_param(s), 12.0 / 4);
  EXPECT_EQ(optimizer_step_bytes(s), 8.0 + 24.0 / 4);
}

}  // namespace
}  // namespace realign
