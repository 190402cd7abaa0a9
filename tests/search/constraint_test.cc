// The hooks an external engine's rules use: candidate filters on meshes and strategies, and tied calls that
// move together in one layout.
#include <gtest/gtest.h>

#include "../plan/test_graphs.h"
#include "search/candidates.h"
#include "search/fake_evaluator.h"
#include "search/mcmc.h"
#include "search/tied_calls.h"

namespace realign {
namespace {

DataflowGraph grpo_graph() {
  return testing::graph_from_yaml(R"(
algorithm: grpo
models: {actor: llama2-7b}
batch: {prompts: 64, prompt_len: 128, gen_len: 512, samples_per_prompt: 4, mini_batches: 2}
)");
}

testing::FakeEvaluator evaluator(const DataflowGraph& g) {
  return testing::FakeEvaluator(
      g, 8,
      {{"actor_gen", 40.0}, {"ref_inf", 6.0}, {"reward_inf", 5.0}, {"actor_inf", 6.0}, {"actor_train", 30.0}},
      {{"actor_gen", 3.0}, {"ref_inf", 1.0}, {"reward_inf", 1.0}, {"actor_inf", 1.0}, {"actor_train", 6.0}},
      4.0, 0.8);
}

bool same_layout(const MfcAssignment& a, const MfcAssignment& b) {
  return a.mesh == b.mesh && a.strategy.dp == b.strategy.dp && a.strategy.tp == b.strategy.tp &&
         a.strategy.pp == b.strategy.pp;
}

TEST(SearchConstraints, FiltersKeepOnlyAllowedMeshesAndStrategies) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = evaluator(g);
  CandidateOptions o;
  o.mesh_filter = [](size_t, const DeviceMesh& m) { return m.size == 8 ? "" : "whole node only"; };
  o.strategy_filter = [&](size_t call, int, const Strategy& s) {
    return g.mfcs[call].kind() == MfcKind::kGenerate && s.pp > 1 ? "no pipelined generation" : "";
  };
  const auto candidates = build_candidates(g, c, ev, o);
  for (size_t i = 0; i < candidates.size(); ++i) {
    ASSERT_FALSE(candidates[i].empty());
    for (const auto& a : candidates[i]) {
      EXPECT_EQ(a.mesh, (DeviceMesh{0, 8}));
      if (g.mfcs[i].kind() == MfcKind::kGenerate) {
        EXPECT_EQ(a.strategy.pp, 1);
      }
    }
  }
}

TEST(SearchConstraints, TiedCallsAreAlignedAndMoveTogether) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = evaluator(g);
  CandidateOptions o;
  const std::vector<std::vector<std::string>> tied = {{"actor_train", "actor_inf", "ref_inf"}};
  auto candidates = build_candidates(g, c, ev, o);
  SearchOptions so;
  so.max_steps = 3000;
  so.time_budget_s = 60;
  const auto untied = mcmc_search(g, candidates, ev, {}, so);
  const size_t train = size_t(g.mfc_index("actor_train")), inf = size_t(g.mfc_index("actor_inf")),
               ref = size_t(g.mfc_index("ref_inf"));
  tie_candidates(g, c, ev, tied, o, candidates);
  ASSERT_FALSE(candidates[train].empty());
  ASSERT_EQ(candidates[inf].size(), candidates[train].size());
  ASSERT_EQ(candidates[ref].size(), candidates[train].size());
  for (size_t k = 0; k < candidates[train].size(); ++k) {
    EXPECT_TRUE(same_layout(candidates[inf][k], candidates[train][k]));
    EXPECT_TRUE(same_layout(candidates[ref][k], candidates[train][k]));
  }
  // Without the tie the best plan runs the inference calls in other layouts than the update; tied, every
  // plan the chain visits keeps them in one, and the result does too.
  EXPECT_FALSE(same_layout(untied.plan.assignments[inf], untied.plan.assignments[train]) &&
               same_layout(untied.plan.assignments[ref], untied.plan.assignments[train]));
  so.tied = tied;
  const auto r = mcmc_search(g, candidates, ev, {}, so);
  EXPECT_TRUE(same_layout(r.plan.assignments[inf], r.plan.assignments[train]));
  EXPECT_TRUE(same_layout(r.plan.assignments[ref], r.plan.assignments[train]));
  EXPECT_GT(r.accepted, 0);
}

// A mixture of experts: one worker holds one layout, so tied calls spread the experts as their leader does.
TEST(SearchConstraints, TiedCallsShareTheLeadersExpertParallelism) {
  const auto g = testing::graph_from_yaml(R"(
algorithm: grpo
models: {actor: qwen3-30b-a3b}
batch: {prompts: 64, prompt_len: 128, gen_len: 512, samples_per_prompt: 4, mini_batches: 2}
)");
  const Cluster c = testing::h100(1);
  auto ev = evaluator(g);
  const size_t train = size_t(g.mfc_index("actor_train")), inf = size_t(g.mfc_index("actor_inf")),
               ref = size_t(g.mfc_index("ref_inf"));
  CandidateOptions o;
  // The leader spreads its experts (ep > 1); the followers, left alone, take any ep.
  o.strategy_filter = [&](size_t call, int, const Strategy& s) {
    return call == train && s.ep == 1 ? "experts spread" : "";
  };
  auto candidates = build_candidates(g, c, ev, o);
  tie_candidates(g, c, ev, {{"actor_train", "actor_inf", "ref_inf"}}, o, candidates);
  ASSERT_FALSE(candidates[train].empty());
  for (size_t k = 0; k < candidates[train].size(); ++k) {
    EXPECT_GT(candidates[train][k].strategy.ep, 1);
    EXPECT_EQ(candidates[inf][k].strategy.ep, candidates[train][k].strategy.ep);
    EXPECT_EQ(candidates[ref][k].strategy.ep, candidates[train][k].strategy.ep);
  }
}

}  // namespace
}  // namespace realign
