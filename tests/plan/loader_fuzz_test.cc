// Generated garbage fed to the config and plan loaders: they must throw realign::Error or succeed, never crash.
#include <gtest/gtest.h>

#include "core/config_file.h"
#include "core/rng.h"
#include "plan/execution_plan.h"
#include "plan/test_graphs.h"

namespace realign {
namespace {

const char* kValidConfig = R"(algorithm: ppo
models: {actor: llama-tiny, critic: gpt2-tiny}
batch: {prompts: 16, prompt_len: 32, gen_len: 32, mini_batches: 2}
)";

const char* kValidPlan = R"({"name": "p", "mfcs": [
 {"name": "actor_gen", "mesh": "0-3", "dp": 2, "tp": 2, "pp": 1, "micro_batches": 1},
 {"name": "ref_inf", "mesh": "0-1", "dp": 1, "tp": 2, "pp": 1},
 {"name": "reward_inf", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-7", "dp": 8, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "4-7", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-7", "dp": 2, "tp": 2, "pp": 2, "micro_batches": 2},
 {"name": "critic_train", "mesh": "4-7", "dp": 2, "tp": 1, "pp": 2}], "disjoint": [["actor_gen", "critic_inf"]]})";

std::string mutate(const std::string& text, Rng& rng) {
  std::string s = text;
  const int edits = 1 + int(rng.uniform_int(4));
  const std::string alphabet = "{}[]:,\"' -0123456789abcdefxyz@.\n\t\\#&*!|>%";
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t pos = size_t(rng.uniform_int(int64_t(s.size())));
    switch (rng.uniform_int(4)) {
      case 0: s.erase(pos, 1 + size_t(rng.uniform_int(5))); break;
      case 1: s.insert(pos, 1, alphabet[size_t(rng.uniform_int(int64_t(alphabet.size())))]); break;
      case 2: s[pos] = alphabet[size_t(rng.uniform_int(int64_t(alphabet.size())))]; break;
      default: s = s.substr(0, pos); break;
    }
  }
  return s;
}

TEST(LoaderFuzz, ConfigAndPlanLoadersNeverCrash) {
  Rng rng(7);
  const Cluster cluster = testing::h100(1);
  const DataflowGraph graph = testing::graph_from_yaml(kValidConfig);
  int accepted_configs = 0, accepted_plans = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string config = mutate(kValidConfig, rng);
    try {
      testing::graph_from_yaml(config);
      ++accepted_configs;
    } catch (const Error&) {
    }
    const std::string plan_text = mutate(kValidPlan, rng);
    try {
      ExecutionPlan plan = plan_from_json(parse_yaml(plan_text, "plan.json"), "plan.json");
      validate_plan(graph, cluster, plan);
      ++accepted_plans;
    } catch (const Error&) {
    }
  }
  // The mutations are small, so some survive; most do not. Both paths were exercised.
  EXPECT_GT(accepted_configs, 0);
  EXPECT_LT(accepted_configs, 3000);
  EXPECT_GT(accepted_plans, 0);
  EXPECT_LT(accepted_plans, 3000);
}

// The fuzz's starting points load as written and validate, so every mutation is a few edits from a valid
// input.
TEST(LoaderFuzz, UnmutatedInputsAreValid) {
  const DataflowGraph graph = testing::graph_from_yaml(kValidConfig);
  ExecutionPlan plan = plan_from_json(parse_yaml(kValidPlan, "plan.json"), "plan.json");
  ASSERT_NO_THROW(validate_plan(graph, testing::h100(1), plan));
  ASSERT_EQ(plan.assignments.size(), graph.mfcs.size());
  for (size_t i = 0; i < graph.mfcs.size(); ++i) EXPECT_EQ(plan.assignments[i].mfc, graph.mfcs[i].name);
  const MfcAssignment& train = plan.assignments[size_t(graph.mfc_index("actor_train"))];
  EXPECT_EQ(train.mesh, (DeviceMesh{0, 8}));
  EXPECT_EQ(train.strategy, (Strategy{2, 2, 2, 2}));
  const MfcAssignment& gen = plan.assignments[size_t(graph.mfc_index("actor_gen"))];
  EXPECT_EQ(gen.mesh, (DeviceMesh{0, 4}));
  EXPECT_EQ(gen.strategy, (Strategy{2, 2, 1, 1}));
  EXPECT_EQ(plan.disjoint, (std::vector<std::vector<std::string>>{{"actor_gen", "critic_inf"}}));
  EXPECT_EQ(plan_from_json(to_json(plan), "plan.json"), plan);
}

}  // namespace
}  // namespace realign
