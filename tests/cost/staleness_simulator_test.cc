// The simulator with train.staleness N > 0: the steady state of overlapping iterations, on a hand-computable
// case, the weight-version edge on the timeline, and the memory of the extra version.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "cost/fixtures.h"
#include "cost/simulator.h"
#include "cost/timeline_svg.h"

namespace realign {
namespace {

using testing::assign;
using testing::free_transfers;
using testing::make_cluster;

DataflowGraph graph_with(const std::string& algorithm, int64_t staleness) {
  AlgorithmConfig c;
  c.algorithm = *algorithm_from_string(algorithm);
  for (const auto& role : algorithm_roles(c.algorithm)) c.models[role] = builtin_model("llama2-7b");
  c.batch.prompts = 64;
  c.batch.prompt_len = 128;
  c.batch.gen_len = 128;
  c.batch.samples_per_prompt = algorithm == "grpo" ? 4 : 1;
  c.staleness = staleness;
  return build_graph(c);
}

// GRPO on split_grpo_plan (generation, the reference and the reward model on node 0; actor_inf and training
// on node 1. With the reference on node 1, node 1 would run it for iteration i+N, waiting for that
// generation, before training iteration i: calls serialize on shared devices in step order, as the runtime
// runs them.)
SimulationResult run_by_hand(int64_t staleness, double gen_s, double train_s) {
  return testing::run_hand_timed(graph_with("grpo", staleness), gen_s, train_s);
}

TEST(SimulatorStaleness, HandComputableSteadyState) {
  // Synchronous: generation then training, 3 + 2 s. Staleness 1: the generation of iteration i+1 runs
  // beside the training of iteration i, so an iteration takes the longer of the two.
  const SimulationResult sync = run_by_hand(0, 3, 2);
  EXPECT_NEAR(sync.iteration_time_s, 5.0, 1e-9);
  EXPECT_EQ(sync.steps, 1);
  const SimulationResult async = run_by_hand(1, 3, 2);
  EXPECT_NEAR(async.iteration_time_s, 3.0, 1e-9);
  EXPECT_EQ(async.staleness, 1);
  EXPECT_GE(async.steps, 3);
  EXPECT_NEAR(run_by_hand(2, 3, 2).iteration_time_s, 3.0, 1e-9);
  EXPECT_NEAR(run_by_hand(1, 2, 3).iteration_time_s, 3.0, 1e-9);
  EXPECT_NEAR(run_by_hand(0, 2, 3).iteration_time_s, 5.0, 1e-9);
  // The calls describe the last step: generation from its start, training beside it.
  EXPECT_NEAR(async.calls[0].start_s, 0.0, 1e-9);
  EXPECT_NEAR(async.calls[0].end_s, 3.0, 1e-9);
  EXPECT_NEAR(async.calls[4].end_s - async.calls[4].start_s, 2.0, 1e-9);
  EXPECT_LT(async.calls[4].start_s, async.calls[0].end_s);
}

TEST(SimulatorStaleness, ConsecutiveIterationsOverlapAndGenerationWaitsForItsWeightVersion) {
  for (int64_t n : {1, 2}) {
    const SimulationResult r = run_by_hand(n, 3, 2);
    std::map<int64_t, const TimelineEvent*> gen, train, gen_realloc;
    for (const TimelineEvent& e : r.timeline.events) {
      if (e.name == "actor_gen" && e.kind == "call") gen[e.iteration] = &e;
      if (e.name == "actor_gen" && e.kind == "realloc" && e.first_device == 0) gen_realloc[e.iteration] = &e;
      if (e.name == "actor_train" && e.kind == "call") train[e.iteration] = &e;
    }
    // Steps 1..K generate iterations 1..K+N and train 1..K.
    ASSERT_EQ(int64_t(gen.size()), r.steps + n) << n;
    ASSERT_EQ(int64_t(train.size()), r.steps) << n;
    for (const auto& [i, g] : gen) {
      // Each generation reads a reallocated weight version: the one training iteration i-1-N left.
      ASSERT_TRUE(gen_realloc.count(i)) << i;
      EXPECT_GE(g->start_s, gen_realloc.at(i)->end_s);
      if (i - 1 - n >= 1) {
        EXPECT_GE(gen_realloc.at(i)->start_s, train.at(i - 1 - n)->end_s) << i;
      }
      // ... and runs beside the training of an earlier iteration.
      if (i > n + 1 && train.count(i - n)) {
        const TimelineEvent* t = train.at(i - n);
        EXPECT_LT(std::max(g->start_s, t->start_s), std::min(g->end_s, t->end_s)) << "n " << n << " i " << i;
      }
    }
    const Timeline back = timeline_from_json(to_json(r.timeline), "timeline");
    EXPECT_EQ(back, r.timeline);
    // The picture labels each call with its iteration.
    EXPECT_NE(timeline_svg(r.timeline, "").find("iteration 3"), std::string::npos);
  }
}

TEST(SimulatorStaleness, OldTimelinesWithoutIterationsLoadAsIterationOne) {
  Json j = to_json(run_by_hand(0, 3, 2));
  for (auto& e : j["timeline"]["events"]) {
    EXPECT_EQ(e["iteration"].get<int64_t>(), 1);
    e.erase("iteration");
  }
  for (const char* key : {"staleness", "steps", "steady_start_s"}) j.erase(key);
  const SimulationResult back = simulation_result_from_json(j, "result");
  EXPECT_EQ(back, run_by_hand(0, 3, 2));
  Json bad = to_json(run_by_hand(1, 3, 2));
  bad["timeline"]["events"][0]["iteration"] = 0;
  EXPECT_THROW(simulation_result_from_json(bad, "result"), Error);
}

TEST(SimulatorStaleness, GenerationDevicesHoldTheExtraVersionAndTheBatchesInFlight) {
  // PPO; generation and the reference on node 0, the rest on node 1.
  ExecutionPlan plan;
  plan.assignments = {assign("actor_gen", 0, 2, 4, 1),      assign("ref_inf", 0, 2, 4, 1),
                      assign("reward_inf", 8, 2, 4, 1),     assign("actor_inf", 8, 2, 4, 1),
                      assign("critic_inf", 8, 2, 4, 1),     assign("actor_train", 8, 2, 4, 1, 8),
                      assign("critic_train", 8, 2, 4, 1, 8)};
  const Cluster cluster = make_cluster(2, 8);
  const HardwareProfile profile = default_profile(cluster.device);
  const DataflowGraph g0 = graph_with("ppo", 0), g1 = graph_with("ppo", 1);
  Simulator sim0(g0, cluster, profile), sim1(g1, cluster, profile);
  const SimulationResult r0 = sim0.run(plan), r1 = sim1.run(plan);
  ASSERT_TRUE(r0.fits && r1.fits) << r0.oom_report << r1.oom_report;
  const double copy = sim1.call_estimate(0, plan.assignments[0]).stages[0].weights;
  EXPECT_GT(copy, 0);
  // Each dp rank of the generation keeps its share of one batch of sequences and log-probs.
  const Mfc& gen = g1.mfcs[0];
  const double in_flight = double(gen.n_seqs / 2) * double(gen.seq_len()) * (8.0 + 4.0);
  // Synchronously the reference's call sees no actor weights on node 0; with staleness 1 the generation's
  // version stays there, and the batch in flight; the generation itself holds the same copy either way.
  EXPECT_NEAR(r1.calls[1].peak_mem_bytes - r0.calls[1].peak_mem_bytes, copy + in_flight, 1.0);
  EXPECT_NEAR(r1.calls[0].peak_mem_bytes - r0.calls[0].peak_mem_bytes, in_flight, 1.0);
  // Node 1 (the actor's home) holds nothing more.
  EXPECT_DOUBLE_EQ(r1.device_peak_mem_bytes[8], r0.device_peak_mem_bytes[8]);

  // Too little memory where the generation runs: the report names the kept version and the batches. (Three
  // nodes, training spread over two, so that node 0 needs the most.)
  ExecutionPlan heavy;
  heavy.assignments = {assign("actor_gen", 0, 8, 1, 1),       assign("ref_inf", 0, 8, 1, 1),
                       assign("reward_inf", 16, 1, 8, 1),     assign("actor_inf", 8, 1, 8, 1),
                       assign("critic_inf", 16, 1, 8, 1),     assign("actor_train", 8, 1, 8, 1, 8),
                       assign("critic_train", 16, 1, 8, 1, 8)};
  const Cluster three = make_cluster(3, 8);
  Simulator roomy(g1, three, profile);
  const SimulationResult fits = roomy.run(heavy);
  ASSERT_TRUE(fits.fits) << fits.oom_report;
  const auto worst = std::max_element(fits.device_peak_mem_bytes.begin(), fits.device_peak_mem_bytes.end());
  ASSERT_LT(worst - fits.device_peak_mem_bytes.begin(), 8);
  HardwareProfile small = profile;
  small.memory_bytes.value = *worst / small.usable_memory_fraction.value * 0.99;
  Simulator tight(g1, three, small);
  const SimulationResult oom = tight.run(heavy);
  EXPECT_FALSE(oom.fits);
  EXPECT_NE(oom.oom_report.find("actor_gen weight version kept for staleness 1"), std::string::npos)
      << oom.oom_report;
  EXPECT_NE(oom.oom_report.find("actor_gen batches in flight"), std::string::npos) << oom.oom_report;
}

TEST(SimulatorStaleness, SharedDevicesSerializeInStepOrder) {
  // Everything on all devices: nothing can overlap, so staleness buys nothing and the generation reads
  // the actor's weights in place (no copy kept).
  ExecutionPlan plan;
  for (const char* m : {"actor_gen", "ref_inf", "reward_inf", "actor_inf", "actor_train"})
    plan.assignments.push_back(assign(m, 0, 2, 8, 1));
  const Cluster cluster = make_cluster(2, 8);
  const DataflowGraph g0 = graph_with("grpo", 0), g1 = graph_with("grpo", 1);
  Simulator sim0(g0, cluster, default_profile(cluster.device)),
      sim1(g1, cluster, default_profile(cluster.device));
  const SimulationResult r0 = sim0.run(plan), r1 = sim1.run(plan);
  EXPECT_NEAR(r1.iteration_time_s, r0.iteration_time_s, 1e-9 * r0.iteration_time_s);
  EXPECT_EQ(r1.realloc_bytes, 0);
  for (size_t d = 0; d < r0.device_idle_fraction.size(); ++d)
    EXPECT_NEAR(r1.device_idle_fraction[d], r0.device_idle_fraction[d], 1e-9);
}

}  // namespace
}  // namespace realign
