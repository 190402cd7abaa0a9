#include "search/presets.h"

#include <gtest/gtest.h>

#include "../plan/test_graphs.h"
#include "search/candidates.h"
#include "search/fake_evaluator.h"

namespace realign {
namespace {

testing::FakeEvaluator ppo_evaluator(const DataflowGraph& g, int devices) {
  std::map<std::string, double> work, mem;
  for (const auto& m : g.mfcs) {
    work[m.name] = m.kind() == MfcKind::kGenerate ? 50 : m.kind() == MfcKind::kTrain ? 30 : 8;
    mem[m.name] = 1.0;
  }
  return testing::FakeEvaluator(g, devices, work, mem, 10.0, 0.5);
}

TEST(Presets, SplitClusterMakesDisjointValidMeshes) {
  const Cluster c = testing::h100(2);
  for (int parts : {1, 2, 3, 4, 5}) {
    const auto pieces = split_cluster(c, parts);
    ASSERT_EQ(int(pieces.size()), parts);
    for (size_t a = 0; a < pieces.size(); ++a) {
      EXPECT_EQ(mesh_problem(pieces[a], c), "");
      for (size_t b = a + 1; b < pieces.size(); ++b) EXPECT_FALSE(pieces[a].overlaps(pieces[b]));
    }
  }
  EXPECT_EQ(split_cluster(c, 3)[0].size, 8);
  EXPECT_EQ(split_cluster(testing::h100(1, 1), 2).size(), 1u);  // a single device cannot be split
}

TEST(Presets, ShapesFollowTheirDefinitions) {
  const auto g = testing::ppo_7b();
  const Cluster c = testing::h100(2);
  auto ev = ppo_evaluator(g, 16);
  for (const auto& name : preset_names()) {
    auto plan = make_preset(name, g, c, ev);
    ASSERT_TRUE(plan.has_value()) << name;
    validate_plan(g, c, *plan);
    EXPECT_EQ(plan->name, name);
  }
  const auto co = *make_preset("co-located", g, c, ev);
  for (const auto& a : co.assignments) {
    EXPECT_EQ(a.mesh, (DeviceMesh{0, 16}));
    EXPECT_EQ(a.layout().tp, co.assignments[0].layout().tp);
    EXPECT_EQ(a.layout().dp, co.assignments[0].layout().dp);
    EXPECT_EQ(a.layout().pp, co.assignments[0].layout().pp);
  }
  const auto inter = *make_preset("interleaving", g, c, ev);
  const auto& ref = inter.assignments[size_t(g.mfc_index("ref_inf"))].mesh;
  const auto& rew = inter.assignments[size_t(g.mfc_index("reward_inf"))].mesh;
  const auto& cri = inter.assignments[size_t(g.mfc_index("critic_inf"))].mesh;
  EXPECT_FALSE(ref.overlaps(rew));
  EXPECT_FALSE(ref.overlaps(cri));
  EXPECT_FALSE(rew.overlaps(cri));
  const auto dis = *make_preset("disaggregated", g, c, ev);
  const auto& gen = dis.assignments[0].mesh;
  for (size_t i = 1; i < dis.assignments.size(); ++i) EXPECT_FALSE(gen.overlaps(dis.assignments[i].mesh));
  EXPECT_FALSE(dis.disjoint.empty());
}

// Megatron-LM's rule: the smallest model-parallel size that fits, tensor parallelism first up to a node,
// then pipeline stages; data parallelism takes the rest. The fake evaluator divides a call's memory by
// tp * pp and, left to itself, prefers less tensor parallelism (each degree costs 15%).
TEST(Presets, CoLocatedFollowsMegatronRule) {
  const auto g = testing::ppo_7b();
  auto layout_for = [&](const Cluster& c, double memory) {
    std::map<std::string, double> work, mem;
    for (const auto& m : g.mfcs) work[m.name] = 10, mem[m.name] = memory;
    testing::FakeEvaluator ev(g, c.n_devices(), work, mem, 10.0, 0.5);
    const auto plan = make_preset("co-located", g, c, ev);
    EXPECT_TRUE(plan.has_value());
    return plan ? plan->assignments[0].layout() : Layout{};
  };
  Layout l = layout_for(testing::h100(1), 5.0);  // fits without model parallelism
  EXPECT_EQ(l.dp, 8);
  EXPECT_EQ(l.tp * l.pp, 1);
  l = layout_for(testing::h100(1), 35.0);  // needs tp * pp >= 4: tensor parallelism first
  EXPECT_EQ(l.tp, 4);
  EXPECT_EQ(l.pp, 1);
  EXPECT_EQ(l.dp, 2);
  l = layout_for(testing::h100(2), 150.0);  // needs tp * pp >= 16: a node's 8, then 2 stages
  EXPECT_EQ(l.tp, 8);
  EXPECT_EQ(l.pp, 2);
  EXPECT_EQ(l.dp, 1);
}

// For a training run the presets use only what the runtime executes, which includes pipelined generation:
// where memory pushes the co-located layout to pipeline parallelism, generation pipelines too.
TEST(Presets, RuntimeLimitsAllowPipelinedGeneration) {
  const auto g = testing::ppo_7b();
  const Cluster c = testing::h100(2);
  std::map<std::string, double> work, mem;
  for (const auto& m : g.mfcs)
    work[m.name] = 10, mem[m.name] = 150.0;  // over the limit of 10 below tp * pp = 16: t8p2
  testing::FakeEvaluator ev(g, 16, work, mem, 10.0, 0.5);
  const auto free = make_preset("co-located", g, c, ev);
  ASSERT_TRUE(free.has_value());
  EXPECT_GT(free->assignments[0].strategy.pp, 1);
  for (const auto& name : preset_names()) {
    const auto plan = make_preset(name, g, c, ev, true);
    ASSERT_TRUE(plan.has_value()) << name;
    for (const auto& a : plan->assignments) EXPECT_EQ(runtime_limit_problem(g, a), "") << name;
  }
  const auto limited = make_preset("co-located", g, c, ev, true);
  ASSERT_TRUE(limited.has_value());
  EXPECT_GT(limited->assignments[size_t(g.mfc_index("actor_gen"))].strategy.pp, 1);
}

// The one-layout baselines train as fixed-layout engines do by default, recomputing activations, even where
// memory would not need it (everything fits the fake evaluator, which prices recomputation like keeping
// activations); a plan for a training run keeps activations, as realign's runtime does.
TEST(Presets, OneLayoutBaselinesRecomputeInTrainCallsExceptForTheRuntime) {
  const auto g = testing::ppo_7b();
  const Cluster c = testing::h100(1);
  auto ev = ppo_evaluator(g, 8);
  for (const bool runtime : {false, true}) {
    const auto colocated = make_preset("co-located", g, c, ev, runtime);
    const auto one_layout = one_layout_plan(g, c, ev, Layout{0, 2, 4, 1}, runtime);
    ASSERT_TRUE(colocated.has_value() && one_layout.has_value());
    for (const ExecutionPlan* plan : {&*colocated, &*one_layout})
      for (size_t i = 0; i < g.mfcs.size(); ++i)
        EXPECT_EQ(plan->assignments[i].strategy.recompute, !runtime && g.mfcs[i].kind() == MfcKind::kTrain)
            << g.mfcs[i].name << (runtime ? " (runtime)" : "");
  }
  // The heuristic preset, like the search, decides per call: with nothing to gain it keeps activations.
  const auto heuristic = make_preset("heuristic", g, c, ev);
  ASSERT_TRUE(heuristic.has_value());
  for (const auto& a : heuristic->assignments) EXPECT_FALSE(a.strategy.recompute) << a.mfc;
}

// One layout for every call on the whole cluster, as ReaLHF's pipe_model allocation: each call keeps the
// layout even where the evaluator would pick another (here less tensor parallelism), and chooses only its
// micro-batches and ZeRO-1. A layout no strategy of a call can take gives no plan.
TEST(Presets, OneLayoutPlanKeepsTheLayoutForEveryCall) {
  const auto g = testing::ppo_7b();
  const Cluster c = testing::h100(2);
  auto ev = ppo_evaluator(g, 16);
  const auto plan = one_layout_plan(g, c, ev, Layout{0, 1, 8, 2});
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->assignments.size(), g.mfcs.size());
  for (const auto& a : plan->assignments) {
    EXPECT_EQ(a.mesh, (DeviceMesh{0, 16}));
    EXPECT_EQ(a.layout(), (Layout{0, 1, 8, 2})) << a.mfc;
  }
  EXPECT_FALSE(one_layout_plan(g, c, ev, Layout{0, 1, 16, 1}).has_value());  // tp never spans nodes
}

TEST(Presets, UnknownPresetNamesTheField) {
  const auto g = testing::ppo_7b();
  auto ev = ppo_evaluator(g, 16);
  EXPECT_THROW(make_preset("colocated", g, testing::h100(2), ev), Error);
}

TEST(Presets, SftHasNothingToDisaggregateOrInterleave) {
  const auto g = testing::graph_from_yaml(
      "algorithm: sft\nmodels: {actor: llama2-7b}\nbatch: {prompts: 64, prompt_len: 512}\n");
  auto ev = ppo_evaluator(g, 8);
  EXPECT_FALSE(make_preset("disaggregated", g, testing::h100(1), ev).has_value());
  EXPECT_FALSE(make_preset("interleaving", g, testing::h100(1), ev).has_value());
  EXPECT_TRUE(make_preset("co-located", g, testing::h100(1), ev).has_value());
}

}  // namespace
}  // namespace realign
