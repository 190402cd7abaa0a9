// The search over mixture-of-experts models: ep is a degree of every candidate strategy, and the plans it
// finds for Qwen3-30B-A3B on 32 H100 (NeMo-RL's published setting) fit in memory and name ep per call.
#include <gtest/gtest.h>

#include <set>

#include "../plan/test_graphs.h"
#include "cost/hardware_profile.h"
#include "search/candidates.h"
#include "search/planner.h"
#include "search/simulator_evaluator.h"

namespace realign {
namespace {

using testing::grpo_qwen3_30b;

// The planner on 32 H100 with the shipped profile, as `realign plan` runs it (`runtime_limits` as `train`).
PlannerOutput plan_on_32_h100(const DataflowGraph& g, bool runtime_limits) {
  const Cluster c = testing::h100(4);
  Simulator sim(g, c, builtin_profile(c.device));
  SimulatorEvaluator evaluator(sim);
  PlanOptions options;
  options.search.seed = 1;
  options.search.max_steps = 2000;
  options.search.time_budget_s = 60;
  options.candidates.runtime_limits = runtime_limits;
  return plan_iteration(g, c, evaluator, options);
}

TEST(MoeSearch, CandidateStrategiesSpanEveryValidEp) {
  const DataflowGraph g = grpo_qwen3_30b();
  const Cluster c = testing::h100(4);
  const size_t train = size_t(g.mfc_index("actor_train"));
  std::set<int> eps;
  for (const Strategy& s : call_strategies(g, c, train, 32, false)) {
    EXPECT_EQ(expert_parallel_problem(g.model(Role::kActor).spec, s.dp, s.tp, s.ep), "") << to_string(s);
    if (s.dp == 16 && s.tp == 2 && s.pp == 1) eps.insert(s.ep);
  }
  EXPECT_EQ(eps, (std::set<int>{1, 2, 4, 8, 16, 32}));
  // A dense model keeps ep 1.
  const DataflowGraph dense = testing::ppo_7b();
  for (const Strategy& s : call_strategies(dense, c, 0, 32, false)) EXPECT_EQ(s.ep, 1);
}

TEST(MoeSearch, PlansFitAndNameEpPerCall) {
  const DataflowGraph g = grpo_qwen3_30b();
  const PlannerOutput out = plan_on_32_h100(g, false);
  ASSERT_TRUE(out.score.fits()) << out.score.overflow_bytes;
  for (const MfcAssignment& a : out.plan.assignments) {
    EXPECT_EQ(expert_parallel_problem(g.model(g.mfcs[size_t(g.mfc_index(a.mfc))].model).spec, a.strategy.dp,
                                      a.strategy.tp, a.strategy.ep),
              "")
        << a.mfc;
    const Json saved = to_json(out.plan)["mfcs"][size_t(g.mfc_index(a.mfc))];
    EXPECT_EQ(saved.value("ep", 1), a.strategy.ep) << a.mfc;
  }
  // Every expert of a 30.5B-parameter model with its Adam state does not fit one 80 GB device: the train
  // call spreads its experts.
  EXPECT_GT(out.plan.assignments[size_t(g.mfc_index("actor_train"))].strategy.ep, 1);
}

// The runtime runs softmax-routed experts: a training run's plan spreads them (ep > 1) and keeps to what the
// runtime does with ep > 1 (no ZeRO-1, no pipelined generation).
TEST(MoeSearch, TrainingRunsPlanQwen3MoeWithinTheRuntimesEpLimits) {
  const DataflowGraph g = grpo_qwen3_30b();
  const PlannerOutput out = plan_on_32_h100(g, true);
  bool spread = false;
  for (const MfcAssignment& a : out.plan.assignments) {
    EXPECT_EQ(runtime_limit_problem(g, a), "") << a.mfc;
    spread |= a.strategy.ep > 1;
  }
  EXPECT_TRUE(spread);
}

TEST(MoeSearch, TrainingRunsRefuseDeepseekV3NamingTheModel) {
  const DataflowGraph g = testing::graph_from_yaml(R"(
algorithm: grpo
models: {actor: deepseek-v3}
batch: {prompts: 64, samples_per_prompt: 32, prompt_len: 256, mini_batches: 4, gen_len: 1024})");
  try {
    plan_on_32_h100(g, true);
    FAIL() << "planned DeepSeek-V3 for the runtime";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "models.actor");
    EXPECT_NE(std::string(e.what()).find("mla: the runtime does not run multi-head latent attention"),
              std::string::npos)
        << e.what();
  }
}

TEST(MoeSearch, RuntimeLimitsWithExpertParallelism) {
  const DataflowGraph g = grpo_qwen3_30b();
  Strategy s{4, 2, 1, 1};
  s.ep = 8;
  EXPECT_EQ(runtime_limit_problem(g, MfcAssignment{"actor_train", DeviceMesh{0, 8}, s}), "");
  s.zero1 = true;
  EXPECT_NE(runtime_limit_problem(g, MfcAssignment{"actor_train", DeviceMesh{0, 8}, s}).find("zero1"),
            std::string::npos);
  Strategy gen{2, 2, 2, 4};
  gen.ep = 4;
  EXPECT_NE(runtime_limit_problem(g, MfcAssignment{"actor_gen", DeviceMesh{0, 8}, gen}).find("pipelined"),
            std::string::npos);
  gen.pp = 1;
  gen.dp = 4;
  // Without a pipeline, micro-batches are waves: with ep > 1 the runtime generates in one.
  EXPECT_NE(runtime_limit_problem(g, MfcAssignment{"actor_gen", DeviceMesh{0, 8}, gen}).find("one wave"),
            std::string::npos);
  gen.micro_batches = 1;
  EXPECT_EQ(runtime_limit_problem(g, MfcAssignment{"actor_gen", DeviceMesh{0, 8}, gen}), "");
}

}  // namespace
}  // namespace realign
