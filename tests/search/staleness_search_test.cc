// The search with train.staleness: it scores plans by the simulator's steady state, and may start from the
// best plan found for another staleness.
#include <gtest/gtest.h>

#include "../plan/test_graphs.h"
#include "cost/hardware_profile.h"
#include "search/planner.h"
#include "search/simulator_evaluator.h"

namespace realign {
namespace {

DataflowGraph grpo(int64_t staleness, bool recompute_logprobs = true) {
  Json j = parse_yaml(R"(
algorithm: grpo
models: {actor: llama2-7b, reward: qwen2.5-1.5b}
batch: {prompts: 64, prompt_len: 256, gen_len: 768, samples_per_prompt: 4, mini_batches: 2}
)",
                      "test.yaml");
  ObjectReader root(j, "");
  AlgorithmConfig c = algorithm_config_from_json(root);
  root.finish();
  c.staleness = staleness;
  c.recompute_logprobs = recompute_logprobs;
  return build_graph(c);
}

PlanOptions steps(int64_t max_steps) {
  PlanOptions o;
  o.search.seed = 1;
  o.search.max_steps = max_steps;
  o.search.time_budget_s = 120;
  return o;
}

// Transfers and the host's work cost (next to) nothing, generation takes 3 s and training 2 s on any mesh,
// the other calls nothing: synchronously 5 s per iteration whatever the plan; with staleness 1, 3 s once
// generation (with the calls that run ahead) and training get devices of their own.
void hand_times(Simulator& sim) {
  const DataflowGraph& g = sim.graph();
  for (int i = 0; i < int(g.mfcs.size()); ++i)
    sim.set_call_time(i, g.mfcs[size_t(i)].kind() == MfcKind::kGenerate ? 3.0
                         : g.mfcs[size_t(i)].kind() == MfcKind::kTrain  ? 2.0
                                                                        : 0.0);
}

HardwareProfile free_transfers(const Cluster& c) {
  HardwareProfile p = default_profile(c.device);
  for (Coefficient* k :
       {&p.intra_node_latency_s, &p.inter_node_latency_s, &p.collective_overhead_s, &p.iteration_overhead_s})
    k->value = 0;
  for (Coefficient* k : {&p.intra_node_bandwidth, &p.inter_node_bandwidth, &p.host_device_bandwidth})
    k->value = 1e30;
  return p;
}

// GRPO synchronous and at staleness 1 on 2 nodes, with the hand times above and free transfers.
struct HandTimedGrpo {
  const Cluster c = testing::h100(2);
  const HardwareProfile profile = free_transfers(c);
  const DataflowGraph sync = grpo(0), async = grpo(1);
  Simulator sim0{sync, c, profile}, sim1{async, c, profile};
  SimulatorEvaluator ev0{sim0}, ev1{sim1};
  HandTimedGrpo() {
    hand_times(sim0);
    hand_times(sim1);
  }
};

TEST(SearchStaleness, ScoresTheSteadyStateAndFindsGenerationBesideTraining) {
  HandTimedGrpo t;
  const Cluster& c = t.c;
  const DataflowGraph &sync = t.sync, &async = t.async;
  Simulator& sim1 = t.sim1;
  SimulatorEvaluator &ev0 = t.ev0, &ev1 = t.ev1;
  const PlannerOutput p0 = plan_iteration(sync, c, ev0, steps(1500));
  ASSERT_TRUE(p0.score.fits());
  EXPECT_NEAR(p0.score.time_s, 5.0, 1e-6);
  // The evaluator's time is the simulator's steady state for the graph's staleness.
  EXPECT_EQ(ev1.evaluate(p0.plan).time_s, sim1.run(p0.plan).iteration_time_s);
  EXPECT_EQ(sim1.run(p0.plan).staleness, 1);
  // Starting from the synchronous best too, the search is never worse than it, and finds the overlap.
  PlanOptions o = steps(1500);
  o.starts.push_back(p0.plan);
  const PlannerOutput p1 = plan_iteration(async, c, ev1, o);
  ASSERT_TRUE(p1.score.fits());
  EXPECT_LE(p1.score.time_s, ev1.evaluate(p0.plan).time_s * (1 + 1e-12));
  EXPECT_NEAR(p1.score.time_s, 3.0, 1e-6);
  EXPECT_EQ(p1.score.time_s, sim1.run(p1.plan).iteration_time_s);
  const MfcAssignment& gen = p1.plan.assignments[size_t(async.mfc_index("actor_gen"))];
  const MfcAssignment& train = p1.plan.assignments[size_t(async.mfc_index("actor_train"))];
  EXPECT_FALSE(gen.mesh.overlaps(train.mesh));
}

TEST(SearchStaleness, ASecondSearchStartsFromPresetsFormedOnce) {
  // The staleness comparison's searches take the config's presets as starts instead of forming them again.
  HandTimedGrpo t;
  const Cluster& c = t.c;
  const DataflowGraph &sync = t.sync, &async = t.async;
  SimulatorEvaluator &ev0 = t.ev0, &ev1 = t.ev1;
  const PlannerOutput p0 = plan_iteration(sync, c, ev0, steps(300));
  PlanOptions o = steps(300);
  o.form_presets = false;
  for (const PresetOutcome& p : p0.presets)
    if (p.plan) o.starts.push_back(*p.plan);
  ASSERT_GE(o.starts.size(), 3u);
  const PlannerOutput p1 = plan_iteration(async, c, ev1, o);
  EXPECT_TRUE(p1.presets.empty());
  ASSERT_TRUE(p1.search.has_value());
  for (const ExecutionPlan& start : o.starts)
    EXPECT_LE(p1.score.time_s, ev1.evaluate(start).time_s * (1 + 1e-12)) << start.name;
  EXPECT_NEAR(p1.score.time_s, 3.0, 1e-6);
}

TEST(SearchStaleness, StartsWithOtherCallsAreSkipped) {
  // Generation's own log-probs: no actor_inf synchronously, but the asynchronous graph has one.
  const Cluster c = testing::h100(1);
  const HardwareProfile profile = default_profile(c.device);
  const DataflowGraph sync = grpo(0, false), async = grpo(1, false);
  ASSERT_NE(sync.mfcs.size(), async.mfcs.size());
  Simulator sim0(sync, c, profile), sim1(async, c, profile);
  SimulatorEvaluator ev0(sim0), ev1(sim1);
  const PlannerOutput p0 = plan_iteration(sync, c, ev0, steps(300));
  PlanOptions o = steps(300);
  o.starts.push_back(p0.plan);
  const PlannerOutput p1 = plan_iteration(async, c, ev1, o);
  EXPECT_EQ(p1.plan.assignments.size(), async.mfcs.size());
}

}  // namespace
}  // namespace realign
