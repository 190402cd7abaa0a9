// The GPU engine terms of the cost model, each against a hand computation: the per-step decode overhead,
// ZeRO-1's optimizer sharding, activation recomputation, the optimizer step's memory-bound passes, and the
// measured curves (GEMM rows, message size).
#include <gtest/gtest.h>

#include "cost/call_cost.h"
#include "cost/comm_model.h"
#include "cost/fixtures.h"
#include "cost/simulator.h"

namespace realign {
namespace {

using testing::assign;
using testing::make_cluster;
using testing::make_graph;

HardwareProfile h100() { return builtin_profile(builtin_device("h100-sxm", "device")); }

TEST(EngineTerms, DecodeStepOverheadIsPaidPerTokenAndMicroBatch) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 128, 96);
  const Cluster c = make_cluster(1, 8);
  HardwareProfile p = h100();
  const int gen = g.mfc_index("actor_gen");
  MfcAssignment a = assign("actor_gen", 0, 2, 2, 2, 4);
  p.decode_step_overhead_s.value = 1e-3;
  const double with = estimate_call(g, c, p, gen, a).overhead_s;
  p.decode_step_overhead_s.value = 3e-3;
  const double more = estimate_call(g, c, p, gen, a).overhead_s;
  // 96 tokens x 4 micro-batches x 2 ms more.
  EXPECT_NEAR(more - with, 96 * 4 * 2e-3, 1e-9);
}

TEST(EngineTerms, ZeroOneShardsOptimizerStateOverDp) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 256, 256, 4);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = h100();
  const int train = g.mfc_index("actor_train");
  MfcAssignment a = assign("actor_train", 0, 4, 2, 1, 2);
  const CallEstimate plain = estimate_call(g, c, p, train, a);
  a.strategy.zero1 = true;
  const CallEstimate sharded = estimate_call(g, c, p, train, a);
  // 12 bytes per parameter over dp = 4: a quarter; weights and gradients stay.
  EXPECT_NEAR(sharded.memory.optimizer, plain.memory.optimizer / 4, 1.0);
  EXPECT_EQ(sharded.memory.weights, plain.memory.weights);
  EXPECT_EQ(sharded.memory.gradients, plain.memory.gradients);
  // The step's memory-bound passes: 8 + 24 bytes per parameter, 8 + 24/4 with ZeRO-1.
  EXPECT_EQ(optimizer_step_bytes(Strategy{4, 2, 1, 2}), 32.0);
  EXPECT_EQ(optimizer_step_bytes(a.strategy), 14.0);
  EXPECT_LT(sharded.time_s, plain.time_s);
}

TEST(EngineTerms, RecomputationRunsOneMoreForwardAndKeepsLayerInputs) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 256, 256, 4);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = h100();
  const int train = g.mfc_index("actor_train");
  MfcAssignment a = assign("actor_train", 0, 8, 1, 1, 2);
  const CallEstimate plain = estimate_call(g, c, p, train, a);
  a.strategy.recompute = true;
  const CallEstimate rc = estimate_call(g, c, p, train, a);
  // 4 forwards' FLOPs instead of 3 (ReaL counts training this way).
  EXPECT_DOUBLE_EQ(rc.flops, plain.flops * 4.0 / 3.0);
  // Compute of the micro-batch slots grows by 4/3; the optimizer step does not change.
  Strategy no_step = a.strategy;
  const double step =
      double(
          shard_sizes(model_params(g.model(Role::kActor).spec, HeadKind::kLanguageModel), 32, 1, 1).max()) *
      optimizer_step_bytes(no_step) / (p.memory_bandwidth.value * p.decode_bandwidth_efficiency.value);
  const double steps = 4;
  EXPECT_NEAR(rc.compute_s - steps * step, (plain.compute_s - steps * step) * 4.0 / 3.0,
              1e-9 * plain.compute_s);
  // Activations: a layer keeps its bf16 input (2 bytes x tokens x hidden) plus one layer's full set.
  const double mb_tokens = 64.0 / 4 / 8 / 2 * 512;  // sequences per step / dp / micro-batches x seq len
  const double layer_full = mb_tokens * 4096 * (10 + 24.0);
  EXPECT_DOUBLE_EQ(rc.memory.activations, 32 * mb_tokens * 4096 * 2 + layer_full);
  EXPECT_DOUBLE_EQ(plain.memory.activations, 32 * layer_full);
}

// pass_efficiency is what an engine keeps of its kernels' rates over a batched pass; decoding steps are
// priced by their kernels, memory traffic and launches, so it leaves them alone.
TEST(EngineTerms, PassEfficiencySlowsBatchedPassesNotDecodingSteps) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 128, 64, 4);
  const Cluster c = make_cluster(1, 8);
  HardwareProfile p = h100();
  p.pass_efficiency.value = 1.0;
  const int train = g.mfc_index("actor_train"), inf = g.mfc_index("ref_inf"), gen = g.mfc_index("actor_gen");
  const MfcAssignment t = assign("actor_train", 0, 8, 1, 1, 2), i = assign("ref_inf", 0, 8, 1, 1, 1);
  MfcAssignment decode_only = assign("actor_gen", 0, 8, 1, 1, 1);
  const double train1 = estimate_call(g, c, p, train, t).compute_s,
               inf1 = estimate_call(g, c, p, inf, i).compute_s;
  const double gen1 = estimate_call(g, c, p, gen, decode_only).compute_s;
  p.pass_efficiency.value = 0.5;
  // Inference: one pass, all of it at half the rate.
  EXPECT_NEAR(estimate_call(g, c, p, inf, i).compute_s, 2 * inf1, 1e-9 * inf1);
  // Training: its passes at half the rate, its optimizer step (memory-bound) unchanged.
  const double step =
      4 *
      double(
          shard_sizes(model_params(g.model(Role::kActor).spec, HeadKind::kLanguageModel), 32, 1, 1).max()) *
      optimizer_step_bytes(t.strategy) / (p.memory_bandwidth.value * p.decode_bandwidth_efficiency.value);
  EXPECT_NEAR(estimate_call(g, c, p, train, t).compute_s - step, 2 * (train1 - step), 1e-9 * train1);
  // Generation: only its prefill (a batched pass) slows; the decoding steps stay.
  const double gen2 = estimate_call(g, c, p, gen, decode_only).compute_s;
  EXPECT_GT(gen2, gen1);
  EXPECT_LT(gen2, 2 * gen1);
}

TEST(EngineTerms, SmallGemmsRunAtTheirMeasuredShareOfPeak) {
  const HardwareProfile p = h100();
  ASSERT_TRUE(p.gemm_efficiency.is_curve());
  // The measured points keep their shape whatever level `value` sets (the fit scales the level): interpolated
  // in log rows between 16 rows (0.0395) and 64 rows (0.162), 32 rows is half-way; 4096 rows (0.792) is the
  // last point.
  const double level = p.gemm_efficiency.value / 0.792;
  EXPECT_NEAR(p.gemm_efficiency.at(32), level * (0.0395 + 0.162) / 2, 1e-12);
  EXPECT_NEAR(p.gemm_efficiency.at(1e6), p.gemm_efficiency.value, 1e-12);
  EXPECT_NEAR(p.gemm_efficiency.at(0.5), level * 0.00254, 1e-12);  // clamped at the first point
  // A prefill GEMM of 8 sequences of 128 tokens runs far faster per FLOP than a decode step of 8.
  EXPECT_GT(p.gemm_efficiency.at(1024) / p.gemm_efficiency.at(8), 10.0);
}

// Tensor parallelism shortens the depth of the row-parallel matmuls (attention output over hidden / tp, MLP
// output over intermediate / tp); a GEMM runs at its depth's share of the rate. With a depth curve of 0.5 at
// K = 1024 and 1 at 4096, llama2-7b at tp = 2 multiplies its attention output over K = 2048 (0.75, half-way
// in log K) and its MLP output over K = 5504 (past the last point: 1); QKV and the MLP's input keep K = 4096.
TEST(EngineTerms, RowParallelMatmulsRunAtTheRateOfTheirDepth) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 16, 128, 64, 4);
  const Cluster c = make_cluster(1, 8);
  HardwareProfile flat = h100();
  flat.gemm_depth_efficiency = {1.0, "test"};
  HardwareProfile deep = flat;
  deep.gemm_depth_efficiency.of = "gemm_depth";
  deep.gemm_depth_efficiency.points = {{1024, 0.5}, {4096, 1.0}};
  EXPECT_NEAR(deep.gemm_depth_efficiency.at(2048), 0.75, 1e-12);
  const int inf = g.mfc_index("ref_inf");
  const MfcAssignment a = assign("ref_inf", 0, 4, 2, 1, 1);
  const double tokens = 16.0 / 4 * (128 + 64);  // one dp rank's micro-batch
  const double h = 4096, layers = 32;
  const double rate = flat.peak_flops.value * flat.gemm_efficiency.at(tokens);
  // The attention output on one of 2 ranks: 2 x tokens x h outputs x h / 2 depth, 1/0.75 - 1 slower.
  const double o_proj = 2.0 * tokens * h * (h / 2) / rate;
  const double expected = layers * o_proj * (1 / 0.75 - 1) / flat.pass_efficiency.value;
  const double slower =
      estimate_call(g, c, deep, inf, a).compute_s - estimate_call(g, c, flat, inf, a).compute_s;
  EXPECT_NEAR(slower, expected, 1e-9 * expected);
  // At tp = 1 every depth is 4096 or more: nothing changes.
  const MfcAssignment whole = assign("ref_inf", 0, 8, 1, 1, 1);
  EXPECT_DOUBLE_EQ(estimate_call(g, c, deep, inf, whole).compute_s,
                   estimate_call(g, c, flat, inf, whole).compute_s);
}

TEST(EngineTerms, SmallMessagesReachLessOfTheLinkBandwidth) {
  const HardwareProfile p = h100();
  const Link link = intra_node_link(p);
  ASSERT_NE(link.curve, nullptr);
  const double big = 1 << 30, small = 1 << 20;
  EXPECT_DOUBLE_EQ(link.rate(big), p.intra_node_bandwidth.value);
  EXPECT_DOUBLE_EQ(link.rate(small), 278e9);  // the curve's first point (nccl-tests, 1 MiB)
  // An 8-way all-reduce of 1 MiB: 3 latencies plus 2 x 7/8 x bytes at the 1 MiB rate.
  EXPECT_NEAR(ring_allreduce_s(small, 8, link),
              p.collective_overhead_s.value + 3 * p.intra_node_latency_s.value + 1.75 * small / 278e9, 1e-15);
}

// ReaLHF's own heuristic for 7B + 7B on one node: generation d4t1p2 on all 8 GPUs, actor and critic trained
// on halves at d2t2. Without sharding, the actor's Adam state alone (7B x 12 bytes / tp 2 = 37.7 GiB) puts a
// device over its limit; with ZeRO-1 over dp 2 it fits, as it does on Megatron-based systems.
TEST(EngineTerms, ZeroOneLetsReaLsHeuristicPlanFit) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 512, 128, 128, 4);
  const Cluster c = make_cluster(1, 8);
  ExecutionPlan plan;
  for (const Mfc& m : g.mfcs) {
    MfcAssignment a = assign(m.name, 0, 4, 1, 2, 4);
    if (m.name == "actor_train") a = assign(m.name, 0, 2, 2, 1, 4);
    if (m.name == "critic_train") a = assign(m.name, 4, 2, 2, 1, 4);
    if (m.name == "actor_inf" || m.name == "ref_inf") a = assign(m.name, 0, 2, 2, 1, 2);
    if (m.name == "critic_inf" || m.name == "reward_inf") a = assign(m.name, 4, 2, 2, 1, 2);
    plan.assignments.push_back(a);
  }
  validate_plan(g, c, plan);
  Simulator sim(g, c, h100());
  EXPECT_FALSE(sim.run(plan).fits) << "expected not to fit without ZeRO-1";
  for (auto& a : plan.assignments)
    if (a.mfc == "actor_train" || a.mfc == "critic_train") a.strategy.zero1 = true;
  const SimulationResult r = sim.run(plan);
  EXPECT_TRUE(r.fits) << r.oom_report;
}

// Pipelined generation (runtime/pipeline.h), by hand on a profile where only layer launches (1 ms a layer),
// point-to-point latency (5 ms a message) and issuing a message (1 ms) cost anything: a message that a
// micro-batch waits for takes 6 ms, a send that a stage issues and leaves to the network 1 ms. llama2-7b's 32
// layers: 16 per stage at pp = 2, 8 at pp = 4. Prefill: micro_batches + pp - 1 slots of (stage + issuing its
// send), and the first micro-batch's activation crossing pp - 1 boundaries. A decoding step: the longer of
// micro_batches slots of the busiest stage (its forward plus issuing its sends: one activation, or the last
// stage's pp - 1 token messages) and one cycle through the stages and back (pp forwards, pp - 1 hand-offs,
// the token's return, each waited for). At the end the log-probs are broadcast over the stages: three
// messages along a binomial tree (one hop at pp = 2, two at pp = 4).
TEST(EngineTerms, PipelinedDecodeStepIsTheLongerOfTheBusiestSlotsAndTheCycle) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 16, 10);
  const Cluster c = make_cluster(1, 8);
  HardwareProfile p = h100();
  for (Coefficient* k : {&p.peak_flops, &p.memory_bandwidth, &p.intra_node_bandwidth}) {
    k->value = 1e30;
    k->points.clear();
  }
  p.layer_launch_overhead_s.value = 1e-3;
  p.intra_node_latency_s.value = 5e-3;
  p.collective_overhead_s.value = 1e-3;
  p.compute_slots_per_node.value = 64;  // no contention
  p.decode_step_overhead_s.value = p.call_overhead_s.value = 0;
  const int gen = g.mfc_index("actor_gen");
  const double steps = 10, ms = 1e-3;
  struct Case {
    int pp, micro;
    double prefill_ms, step_ms, bubble;
  };
  for (const Case& k : {
           // 2 slots of 16 + 1, one hand-off; cycle 2 x 16 + 6 + 6 = 44 > 1 slot of 17: stages idle.
           Case{2, 1, 2 * 17 + 6, 44, 1 - (1 + 10.0) / (2 + 10 * 44.0 / 17)},
           // 5 slots of 17; 4 slots of 17 = 68 > the cycle.
           Case{2, 4, 5 * 17 + 6, 68, 1 - (4 + 40.0) / (5 + 40.0)},
           // 5 slots of 8 + 1, three hand-offs; the last stage's slot 8 + 3 x 1 = 11; cycle 4 x 8 + 3 x 6 + 6
           // = 56 > 2 x 11.
           Case{4, 2, 5 * 9 + 18, 56, 1 - (2 + 20.0) / (5 + 10 * 56.0 / 11)},
           // 7 slots of 9; 4 x 11 = 44 < the cycle, which paces the step.
           Case{4, 4, 7 * 9 + 18, 56, 1 - (4 + 40.0) / (7 + 10 * 56.0 / 11)},
       }) {
    SCOPED_TRACE("pp " + std::to_string(k.pp) + ", " + std::to_string(k.micro) + " micro-batches");
    const CallEstimate e = estimate_call(g, c, p, gen, assign("actor_gen", 0, 1, 1, k.pp, k.micro));
    const double broadcast_ms = (k.pp == 2 ? 1 : 2) * 3 * 6;
    EXPECT_NEAR(e.time_s, (k.prefill_ms + steps * k.step_ms + broadcast_ms) * ms, 1e-9);
    EXPECT_NEAR(e.bubble_fraction, k.bubble, 1e-9);
  }
}

}  // namespace
}  // namespace realign
