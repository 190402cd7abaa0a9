// Mixture-of-experts models at the command line: `realign models` lists their total and active parameters,
// `realign plan` plans the Qwen3-30B-A3B example with ep per call, and a bad expert-parallel degree, MoE
// field or a model the runtime does not run is refused by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "apps/plan_report.h"
#include "apps/run_config.h"
#include "cli_run.h"
#include "core/config_file.h"
#include "core/json.h"

namespace realign {
namespace {

using testing::run_realign;

std::string example(const std::string& name) { return std::string(REALIGN_SOURCE_DIR) + "/examples/" + name; }

TEST(MoeCli, ModelsListsTotalAndActiveParameters) {
  const auto r = run_realign("models");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* line : {"qwen3-30b-a3b", "30532122624", "3353032704", "mixtral-8x7b", "deepseek-v3",
                           "qwen3-235b-a22b", "softmax, top-8 of 128, renormalised"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST(MoeCli, UnknownMoeFieldIsRefusedByName) {
  const std::string file = ::testing::TempDir() + "/moe_config.json";
  std::ofstream(file) << R"({"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256,
    "max_position_embeddings": 512, "num_local_experts": 4, "num_experts_per_tok": 2,
    "moe_router_type": "sinkhorn"})";
  const auto r = run_realign("models --config " + file);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("moe_router_type"), std::string::npos) << r.out;
}

TEST(MoeCli, ExamplePlansInSecondsWithEpPerCall) {
  const auto r = run_realign("plan " + example("grpo_qwen3_30b_a3b_32xh100.yaml") + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_LT(j["search_time_s"].get<double>(), 30.0);
  bool spread = false;
  for (const auto& m : j["mfcs"]) {
    ASSERT_TRUE(m.contains("ep")) << m.dump();
    spread |= m["ep"].get<int>() > 1;
  }
  EXPECT_TRUE(spread);
}

// `realign train` plans with the runtime's limits on (cmd_train.cc, for_runtime) before any worker starts:
// softmax-routed experts run, DeepSeek-V3 (latent attention, biased sigmoid routing) is refused by name.
TEST(MoeCli, TrainingPlanRefusesDeepseekV3ByName) {
  apps::RunConfig config =
      apps::load_run_config(example("grpo_qwen3_30b_a3b_32xh100.yaml"), {"models.actor=deepseek-v3"});
  EXPECT_FALSE(config.plan.candidates.runtime_limits);  // `realign plan` plans it
  config.plan.candidates.runtime_limits = true;
  try {
    apps::make_plan_report(config, "");
    FAIL() << "planned DeepSeek-V3 for the runtime";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "models.actor");
    EXPECT_EQ(
        std::string(e.what()),
        "models.actor: mla: the runtime does not run multi-head latent attention (DeepSeek-V2's and V3's) "
        "yet: deepseek-v3 (deepseek_v3); realign plan plans it");
  }
}

TEST(MoeCli, NemoRlLayoutSimulatesAndFits) {
  const auto r = run_realign("simulate " + example("grpo_qwen3_30b_a3b_32xh100.yaml") + " --plan " +
                             example("grpo_qwen3_30b_a3b_32xh100.nemo_rl_plan.json") + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Json::parse(r.out)["fits"].get<bool>());
}

TEST(MoeCli, EpNotDividingTheExpertsIsRefusedNamingTheField) {
  const std::string plan = ::testing::TempDir() + "/moe_plan.json";
  const auto saved =
      run_realign("plan " + example("grpo_qwen3_30b_a3b_32xh100.yaml") + " plan.max_steps=200 --out " + plan);
  ASSERT_EQ(saved.code, 0) << saved.out;
  Json j = load_config_file(plan);
  j["mfcs"][0]["dp"] = 32;
  j["mfcs"][0]["tp"] = 1;
  j["mfcs"][0]["pp"] = 1;
  j["mfcs"][0]["ep"] = 3;
  std::ofstream(plan) << j.dump(2);
  const auto r = run_realign("simulate " + example("grpo_qwen3_30b_a3b_32xh100.yaml") + " --plan " + plan);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("mfcs[0].ep"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not divide the 128 experts"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace realign
