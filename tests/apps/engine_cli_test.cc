// `realign plan CONFIG --engine NAME` as a user runs it on the shipped GPU examples: the JSON contract (the
// engine's estimate the sum of its terms), the launch files, and clear errors for bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "apps/cli_run.h"
#include "core/json.h"

namespace realign {
namespace {

using testing::run_realign;

std::string example(const std::string& name) { return std::string(REALIGN_SOURCE_DIR) + "/examples/" + name; }

TEST(EngineCli, ExamplesGiveEngineConfigsAndTheirEstimateTerms) {
  struct Case {
    std::string config, engine, extra;
  };
  const std::vector<Case> cases = {
      {"ppo_llama2_7b_16xh100.yaml", "verl", ""},
      {"ppo_llama2_7b_16xh100.yaml", "openrlhf", ""},
      {"ppo_llama2_7b_16xh100.yaml", "areal", "reward.kind=verifier"},
      {"ppo_llama2_70b_128xh100.yaml", "verl", ""},
      {"ppo_llama2_70b_128xh100.yaml", "openrlhf", ""},
      {"grpo_qwen3_30b_a3b_32xh100.yaml", "nemo-rl", ""},
      {"grpo_qwen3_30b_a3b_32xh100.yaml", "nemo-rl", "train.staleness=1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.config + " --engine " + c.engine);
    const auto r = run_realign("plan " + example(c.config) + " plan.time_budget_s=2 " + c.extra +
                               " --engine " + c.engine + " --json");
    ASSERT_EQ(r.code, 0) << r.out;
    const Json j = Json::parse(r.out);
    EXPECT_EQ(j["engine"], c.engine);
    ASSERT_TRUE(j["engine_config"].is_object());
    EXPECT_FALSE(j["engine_config"].empty());
    EXPECT_GT(j["unconstrained_iteration_time_s"].get<double>(), 0);
    // The engine's figure is the simulation plus the terms priced beside it, as the JSON lists them.
    const Json& p = j["pricing"];
    EXPECT_NEAR(j["iteration_time_s"].get<double>(),
                p["simulated_s"].get<double>() + p["weight_sync_delta_s"].get<double>() +
                    p["zero3_gather_s"].get<double>() + p["turn_swap_s"].get<double>(),
                1e-9 * j["iteration_time_s"].get<double>())
        << p.dump();
  }
}

TEST(EngineCli, OutWritesAnExecutableLaunchScriptAndThePlan) {
  const std::string dir = ::testing::TempDir() + "openrlhf_out";
  const auto r = run_realign("plan " + example("ppo_llama2_7b_16xh100.yaml") +
                             " plan.time_budget_s=1 --engine openrlhf --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("realign's own layout:"), std::string::npos) << r.out;
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/launch.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  std::ifstream script(dir + "/launch.sh");
  std::string text((std::istreambuf_iterator<char>(script)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("python3 -m openrlhf.cli.train_ppo_ray"), std::string::npos);
  EXPECT_TRUE(std::ifstream(dir + "/plan.json").good());
}

// The mixture-of-experts example: the table shows each call's ep, and veRL's config carries the plan's.
TEST(EngineCli, MoeExampleShowsAndWritesTheExpertParallelDegree) {
  const std::string config = example("grpo_qwen3_30b_a3b_32xh100.yaml") + " plan.time_budget_s=1";
  const auto table = run_realign("plan " + config + " --engine verl");
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.out.find(" mb  ep opt"), std::string::npos) << table.out;
  const auto r = run_realign("plan " + config + " --engine verl --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  int train_ep = 1;
  for (const Json& call : j["plan"]["mfcs"])
    if (call["name"] == "actor_train") train_ep = call.value("ep", 1);
  EXPECT_EQ(j["engine_config"]["actor_rollout_ref.actor.megatron.expert_model_parallel_size"], train_ep);
}

// A user's current layout priced before launch: NeMo-RL's published Qwen3-30B-A3B layout as NeMo-RL runs it
// (vLLM with CUDA graphs, so faster than realign's own eager generation; colocated, the policy's state to host
// memory and back around generation), and refused, naming the rule, for an engine that cannot run it.
TEST(EngineCli, SimulatePricesAGivenPlanAsTheEngineRunsIt) {
  const std::string args = "simulate " + example("grpo_qwen3_30b_a3b_32xh100.yaml") + " --plan " +
                           example("grpo_qwen3_30b_a3b_32xh100.nemo_rl_plan.json");
  auto r = run_realign(args + " --engine nemo-rl --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  const Json& as_engine = j["as_engine_runs_it"];
  EXPECT_EQ(as_engine["engine"], "nemo-rl");
  EXPECT_EQ(as_engine["placement"], "colocated generation, megatron");
  EXPECT_LT(as_engine["pricing"]["generation_delta_s"].get<double>(), 0);
  EXPECT_GT(as_engine["pricing"]["turn_swap_s"].get<double>(), 0);
  EXPECT_NEAR(as_engine["iteration_time_s"].get<double>(),
              as_engine["pricing"]["simulated_s"].get<double>() +
                  as_engine["pricing"]["weight_sync_delta_s"].get<double>() +
                  as_engine["pricing"]["turn_swap_s"].get<double>(),
              1e-6);
  // --explain adds what the engine's pricing puts in place of the profile's coefficients.
  r = run_realign(args + " --engine nemo-rl --explain");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t gen = r.out.find("as nemo-rl generates, in place of the above:");
  const size_t passes = r.out.find("as nemo-rl runs its training and inference passes, in place of the above:");
  ASSERT_NE(gen, std::string::npos) << r.out;
  ASSERT_NE(passes, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer_launch_overhead_s = 0 ", gen), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pass_efficiency = ", passes), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-- engine nemo-rl: ", passes), std::string::npos) << r.out;
  r = run_realign(args + " --engine areal");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--plan: AReaL cannot run this plan"), std::string::npos) << r.out;
}

// A dense plan both of NeMo-RL's backends run is priced on each, what fits first: written by the engine
// search for GRPO with a 7B policy on one node, where only DTensor's FSDP2 sharding fits.
TEST(EngineCli, SimulatePricesEveryPlacementThatRunsThePlan) {
  const std::string config = example("grpo_qwen3_30b_a3b_32xh100.yaml") +
                             " models.actor=qwen2.5-7b cluster.nodes=1 plan.time_budget_s=1";
  const std::string dir = ::testing::TempDir() + "nemo_rl_dense";
  auto r = run_realign("plan " + config + " --engine nemo-rl --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_realign("simulate " + config + " --plan " + dir + "/plan.json --engine nemo-rl --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out)["as_engine_runs_it"];
  ASSERT_EQ(j["placements"].size(), 2u) << j.dump();
  // The split is the search's pick; the two placements are that split under each backend.
  const std::string chosen = j["placement"], other = j["placements"][1]["placement"];
  const std::string split = chosen.substr(0, chosen.find(", "));
  EXPECT_EQ(chosen, split + ", dtensor");
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_EQ(other, split + ", megatron");
  EXPECT_FALSE(j["placements"][1]["fits"].get<bool>());
}

TEST(EngineCli, BadInputIsAClearError) {
  auto r = run_realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " --engine megatron-rl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("unknown engine 'megatron-rl'"), std::string::npos) << r.out;
  // AReaL has no reward-model role.
  r = run_realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " --engine areal");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("reward.kind"), std::string::npos) << r.out;
  // NeMo-RL's GRPO has no critic, and its reward-model environment is not written.
  r = run_realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " --engine nemo-rl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("algorithm"), std::string::npos) << r.out;
  r = run_realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " --engine nemo-rl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("reward.kind"), std::string::npos) << r.out;
  // veRL's asynchronous recipes document no critic.
  r = run_realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " train.staleness=1 --engine verl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("train.staleness"), std::string::npos) << r.out;
}

TEST(EngineCli, NothingFitsNamesTheDeviceAndTheCallAndExitsTwo) {
  // Four 70B models on one node of 8 GPUs: OpenRLHF's ZeRO data parallelism cannot hold them.
  const auto r = run_realign("plan " + example("ppo_llama2_70b_128xh100.yaml") +
                             " cluster.nodes=1 plan.time_budget_s=1 --engine openrlhf");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no plan it can run fits in memory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" during "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace realign
