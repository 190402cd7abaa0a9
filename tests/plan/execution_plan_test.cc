#include "plan/execution_plan.h"

#include <gtest/gtest.h>

#include "plan/test_graphs.h"

namespace realign {
namespace {

ExecutionPlan all_on(const DataflowGraph& g, DeviceMesh mesh, Strategy s) {
  ExecutionPlan p;
  for (const auto& m : g.mfcs) p.assignments.push_back({m.name, mesh, s});
  return p;
}

void expect_invalid(const DataflowGraph& g, const Cluster& c, ExecutionPlan p, const std::string& path,
                    const std::string& words) {
  try {
    validate_plan(g, c, p);
    FAIL() << "expected an error at " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), path) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ExecutionPlan, ValidPlanPassesAndIsReordered) {
  const auto g = testing::ppo_7b();
  const auto c = testing::h100(2);
  ExecutionPlan p = all_on(g, {0, 16}, {2, 8, 1, 4});
  std::swap(p.assignments[0], p.assignments[5]);
  validate_plan(g, c, p);
  EXPECT_EQ(p.assignments[0].mfc, "actor_gen");
}

// A serving engine's generation may run a replica's tp over whole nodes (vLLM and SGLang across nodes); every
// other call, and realign's own runtime, keeps tp within a node.
TEST(ExecutionPlan, OnlyAServingEnginesGenerationTakesATpOverWholeNodes) {
  const auto g = testing::ppo_7b();
  const Mfc& gen = g.mfcs[size_t(g.mfc_index("actor_gen"))];
  const Mfc& train = g.mfcs[size_t(g.mfc_index("actor_train"))];
  const ModelSpec& spec = g.model(gen.model).spec;
  const Strategy tp16{1, 16, 1, 1};
  EXPECT_EQ(strategy_problem(gen, spec, testing::h100(2), 16, tp16, true), "");
  EXPECT_NE(strategy_problem(gen, spec, testing::h100(2), 16, tp16, false).find("within one node"),
            std::string::npos);
  EXPECT_NE(strategy_problem(train, spec, testing::h100(2), 16, tp16, true).find("within one node"),
            std::string::npos);
  // Over 4 whole nodes of 4 too; over a node and a half (12 on nodes of 8) it is refused.
  EXPECT_EQ(strategy_problem(gen, spec, testing::h100(4, 4), 16, tp16, true), "");
  EXPECT_NE(strategy_problem(gen, spec, testing::h100(3, 8), 24, Strategy{2, 12, 1, 1}, true)
                .find("not whole ones"),
            std::string::npos);
  ExecutionPlan p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[size_t(g.mfc_index("actor_gen"))].strategy = tp16;
  validate_plan(g, testing::h100(2), p, "plan", true);
  expect_invalid(g, testing::h100(2), p, "plan.mfcs[0].tp", "within one node");
}

TEST(ExecutionPlan, RejectionsNameTheField) {
  const auto g = testing::ppo_7b();
  const auto c = testing::h100(2);
  ExecutionPlan p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[2].mesh = {16, 8};
  expect_invalid(g, c, p, "plan.mfcs[2].mesh", "outside the cluster");
  p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[3].strategy = {4, 2, 1, 1};
  expect_invalid(g, c, p, "plan.mfcs[3]", "does not equal the mesh's 16 devices");
  p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[1].mesh = {0, 8};
  p.assignments[1].strategy = {1, 8, 1, 1};
  p.assignments[4].strategy = {1, 16, 1, 1};
  expect_invalid(g, c, p, "plan.mfcs[4].tp", "within one node");
  Cluster c6 = testing::h100(1, 6);
  p = all_on(g, {0, 6}, {2, 3, 1, 1});
  expect_invalid(g, c6, p, "plan.mfcs[0].tp", "does not divide 32 attention heads");
  p = all_on(g, {0, 16}, {1, 1, 16, 1});
  p.assignments[0].strategy = {1, 1, 16, 1};
  validate_plan(g, c, p);  // 16 stages of 32 layers is fine
  p.assignments[0].mfc = "actor_generate";
  expect_invalid(g, c, p, "plan.mfcs[0].name", "no call named 'actor_generate'");
  p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments.pop_back();
  expect_invalid(g, c, p, "plan.mfcs", "'critic_train' has no assignment");
  p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[4].strategy.micro_batches = 1000;
  expect_invalid(g, c, p, "plan.mfcs[4].micro_batches", "micro-batches");
  p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[0].strategy.zero1 = true;
  expect_invalid(g, c, p, "plan.mfcs[0].zero1", "train calls only");
  p = all_on(g, {0, 16}, {2, 8, 1, 1});
  p.assignments[2].strategy.recompute = true;
  expect_invalid(g, c, p, "plan.mfcs[2].recompute", "train calls only");
}

TEST(ExecutionPlan, DisjointGroupsAreEnforced) {
  const auto g = testing::ppo_7b();
  const auto c = testing::h100(2);
  ExecutionPlan p = all_on(g, {8, 8}, {1, 8, 1, 1});
  p.assignments[0].mesh = {0, 8};
  p.disjoint = {{"actor_gen", "actor_train"}};
  validate_plan(g, c, p);
  const size_t train = size_t(g.mfc_index("actor_train"));
  p.assignments[train].mesh = {0, 16};
  p.assignments[train].strategy = {2, 8, 1, 1};
  expect_invalid(g, c, p, "plan.mfcs[" + std::to_string(train) + "].mesh", "overlaps 'actor_gen'");
  p.disjoint = {{"actor_gen", "actor_trian"}};
  expect_invalid(g, c, p, "plan.disjoint[0][1]", "no call named");
}

TEST(ExecutionPlan, OffloadNamesModelsNeverTrained) {
  const auto g = testing::ppo_7b();
  const auto c = testing::h100(2);
  ExecutionPlan p = all_on(g, {0, 16}, {2, 8, 1, 4});
  p.offload = {Role::kReward, Role::kRef};
  validate_plan(g, c, p);
  p.offload = {Role::kRef, Role::kActor};
  expect_invalid(g, c, p, "plan.offload[1]", "'actor' is trained");
  // GRPO here scores with a reward model but has no critic.
  const auto grpo = testing::grpo_qwen3_30b();
  ExecutionPlan q = all_on(grpo, {0, 16}, {4, 4, 1, 4});
  q.offload = {Role::kCritic};
  expect_invalid(grpo, c, q, "plan.offload[0]",
                 "no model named 'critic' (models never trained: ref, reward)");
  p.offload = {Role::kRef, Role::kRef};
  expect_invalid(g, c, p, "plan.offload[0]", "listed twice");
}

TEST(ExecutionPlan, JsonRoundTrip) {
  const auto g = testing::ppo_7b();
  ExecutionPlan p = all_on(g, {0, 8}, {2, 4, 1, 2});
  p.assignments[1].mesh = {8, 1};
  p.assignments[1].strategy = {1, 1, 1, 1};
  p.disjoint = {{"actor_gen", "ref_inf"}};
  p.offload = {Role::kRef, Role::kReward};
  p.name = "mine";
  p.assignments[5].strategy.zero1 = true;      // actor_train
  p.assignments[6].strategy.recompute = true;  // critic_train
  EXPECT_EQ(to_json(p)["mfcs"][5]["zero1"], true);
  EXPECT_FALSE(to_json(p)["mfcs"][4].contains("zero1"));
  const ExecutionPlan back = plan_from_json(to_json(p), "plan.json");
  EXPECT_EQ(back, p);
  EXPECT_EQ(back.name, "mine");
  EXPECT_EQ(to_json(p)["mfcs"][1]["mesh"], "8");
  EXPECT_EQ(to_json(p)["mfcs"][0]["mesh"], "0-7");
}

TEST(ExecutionPlan, MalformedJsonNamesField) {
  try {
    plan_from_json(parse_yaml("{mfcs: [{name: a, mesh: '0-x', dp: 1, tp: 1, pp: 1}]}", "p"), "plan.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "plan.json.mfcs[0].mesh");
  }
  try {
    plan_from_json(parse_yaml("{mfcs: [{name: a, mesh: '0-1', dp: 1, tp: 1, pp: 1, dpp: 3}]}", "p"),
                   "plan.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "plan.json.mfcs[0].dpp");
  }
  // An offloaded model is a role by name: an unknown one is refused where the plan is read.
  try {
    plan_from_json(parse_yaml("{mfcs: [], offload: [ref, rew]}", "p"), "plan.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "plan.json.offload[1]");
    EXPECT_NE(
        std::string(e.what()).find("unknown model role 'rew'; choose one of actor, critic, ref, reward"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace realign
