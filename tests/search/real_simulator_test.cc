// The search against the real cost model on a small space: MCMC finds the exhaustive optimum.
#include <gtest/gtest.h>

#include "../plan/test_graphs.h"
#include "cost/hardware_profile.h"
#include "search/candidates.h"
#include "search/exhaustive.h"
#include "search/planner.h"
#include "search/simulator_evaluator.h"

namespace realign {
namespace {

TEST(SearchWithSimulator, McmcReachesTheExhaustiveOptimumOnEightDevices) {
  const DataflowGraph g = testing::graph_from_yaml(R"(
algorithm: grpo
models: {actor: llama2-7b, reward: qwen2.5-1.5b}
batch: {prompts: 32, prompt_len: 256, gen_len: 768, samples_per_prompt: 4, mini_batches: 2}
)");
  const Cluster c = testing::h100(1);
  Simulator sim(g, c, default_profile(c.device));
  SimulatorEvaluator ev(sim);
  CandidateOptions options;
  options.strategies_per_mesh_size = 2;
  const auto candidates = build_candidates(g, c, ev, options);
  const auto exact = exhaustive_search(g, candidates, ev);
  ASSERT_TRUE(exact.has_value());
  ASSERT_TRUE(exact->score.fits());
  int hits = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SearchOptions so;
    so.seed = seed;
    so.max_steps = 5000;
    so.time_budget_s = 120;
    so.offload = false;  // the exhaustive search does not offload
    const auto r = mcmc_search(g, candidates, ev, {}, so);
    EXPECT_GE(r.score.time_s, exact->score.time_s * (1 - 1e-12));
    hits += r.score.fits() && r.score.time_s <= exact->score.time_s * (1 + 1e-12);
  }
  EXPECT_GE(hits, 19);
}

}  // namespace
}  // namespace realign

namespace realign {
namespace {

TEST(SearchWithSimulator, RuntimeLimitsKeepGenerationUnpipelinedAndLetTrainingUseAnyMesh) {
  const DataflowGraph g = testing::graph_from_yaml(R"(
algorithm: ppo
models: {actor: llama2-7b, critic: llama2-7b}
batch: {prompts: 256, prompt_len: 256, gen_len: 256, mini_batches: 2}
)");
  const Cluster c = testing::h100(2);
  Simulator sim(g, c, default_profile(c.device));
  SimulatorEvaluator evaluator(sim);
  PlanOptions options;
  options.search.seed = 1;
  options.search.max_steps = 3000;
  options.candidates.runtime_limits = true;
  const PlannerOutput out = plan_iteration(g, c, evaluator, options);
  for (const auto& a : out.plan.assignments) EXPECT_EQ(runtime_limit_problem(g, a), "") << a.mfc;
  const MfcAssignment subset_train{"actor_train", DeviceMesh{8, 8}, Strategy{2, 4, 1, 1}};
  EXPECT_EQ(runtime_limit_problem(g, subset_train), "");
  const MfcAssignment pipelined_gen{"actor_gen", DeviceMesh{0, 16}, Strategy{4, 2, 2, 1}};
  EXPECT_EQ(runtime_limit_problem(g, pipelined_gen), "");
  MfcAssignment recomputing{"actor_train", DeviceMesh{0, 16}, Strategy{4, 2, 2, 4}};
  recomputing.strategy.recompute = true;
  EXPECT_NE(runtime_limit_problem(g, recomputing), "");
}

}  // namespace
}  // namespace realign
