// Expert parallelism in plans: the rules of plan/expert_parallel.h, refused by field in validate_plan, and
// ep saved, loaded and printed with a plan.
#include <gtest/gtest.h>

#include "plan/execution_plan.h"
#include "test_graphs.h"

namespace realign {
namespace {

using testing::grpo_qwen3_30b;

// Every call on the first dp*tp*pp devices with the same strategy.
ExecutionPlan uniform(const DataflowGraph& g, Strategy s) {
  ExecutionPlan plan;
  for (const Mfc& m : g.mfcs) plan.assignments.push_back({m.name, DeviceMesh{0, s.dp * s.tp * s.pp}, s});
  return plan;
}

// "path: message" of validate_plan's refusal of `s` for every call, on nodes of 8 H100.
std::string refusal(const DataflowGraph& g, Strategy s) {
  ExecutionPlan plan = uniform(g, s);
  try {
    validate_plan(g, testing::h100(s.dp * s.tp * s.pp / 8), plan);
  } catch (const Error& e) {
    return e.path() + ": " + e.what();
  }
  return "(valid)";
}

Strategy with_ep(Strategy s, int ep) {
  s.ep = ep;
  return s;
}

TEST(ExpertParallel, RulesInOnePlace) {
  const ModelSpec moe = builtin_model("qwen3-30b-a3b");
  EXPECT_EQ(expert_parallel_problem(moe, 16, 2, 8), "");
  EXPECT_EQ(expert_parallel_problem(moe, 16, 2, 32), "");  // ep may take tp's ranks too (folding)
  EXPECT_NE(expert_parallel_problem(moe, 1, 2, 4).find("does not divide dp*tp = 2"), std::string::npos);
  EXPECT_NE(expert_parallel_problem(moe, 48, 1, 3).find("does not divide the 128 experts"),
            std::string::npos);
  EXPECT_NE(
      expert_parallel_problem(builtin_model("llama2-7b"), 8, 1, 2).find("mixture-of-experts models only"),
      std::string::npos);
  EXPECT_EQ(expert_data_parallel(16, 2, 8), 4);
  // Local rank dp_rank * tp + tp_rank, modulo ep: ep groups are consecutive devices.
  EXPECT_EQ(ep_rank_of(0, 1, 2, 8), 1);
  EXPECT_EQ(ep_rank_of(4, 1, 2, 8), 1);
  EXPECT_EQ(ep_rank_of(3, 1, 2, 8), 7);
}

TEST(ExpertParallel, ValidatePlanRefusesNamingEp) {
  const DataflowGraph g = grpo_qwen3_30b();
  EXPECT_EQ(refusal(g, with_ep(Strategy{16, 2, 1, 1}, 8)), "(valid)");
  EXPECT_EQ(refusal(g, with_ep(Strategy{32, 1, 1, 1}, 32)), "(valid)");
  // 128 experts over 64 ranks would be fine; over dp*tp = 16 x 2 ranks ep 64 breaks the grid rule.
  EXPECT_NE(
      refusal(g, with_ep(Strategy{16, 2, 1, 1}, 64)).find("plan.mfcs[0].ep: ep 64 does not divide dp*tp"),
      std::string::npos);
  // ep 256 divides dp*tp = 256 on 32 nodes but not the 128 experts.
  EXPECT_NE(refusal(g, with_ep(Strategy{256, 1, 1, 1}, 256))
                .find("plan.mfcs[0].ep: ep 256 does not divide the 128 experts"),
            std::string::npos);
  EXPECT_NE(
      refusal(testing::ppo_7b(), with_ep(Strategy{16, 1, 1, 1}, 2)).find("plan.mfcs[0].ep: ep 2 applies to"),
      std::string::npos);
}

TEST(ExpertParallel, PlanJsonCarriesEp) {
  const DataflowGraph g = grpo_qwen3_30b();
  const ExecutionPlan plan = uniform(g, with_ep(Strategy{16, 2, 1, 4, true}, 8));
  const Json j = to_json(plan);
  EXPECT_EQ(j["mfcs"][0]["ep"], 8);
  EXPECT_EQ(plan_from_json(j, "plan").assignments, plan.assignments);
  EXPECT_EQ(to_string(plan.assignments[0].strategy), "d16t2p1e8 x4 zero1");
  EXPECT_EQ(to_string(plan.assignments[0].layout()), "d16t2p1e8");
  EXPECT_EQ(parse_layout("d16t2p1e8", "l"), plan.assignments[0].layout());
  // A dense plan is written as before: no ep key.
  const Json dense = to_json(uniform(g, Strategy{16, 2, 1, 1}));
  EXPECT_FALSE(dense["mfcs"][0].contains("ep"));
  Json bad = j;
  bad["mfcs"][0]["ep"] = 0;
  try {
    plan_from_json(bad, "plan");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "plan.mfcs[0].ep");
  }
}

}  // namespace
}  // namespace realign
