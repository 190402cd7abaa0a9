// `realign import SCRIPT --engine NAME` as a user runs it on their own launch script (or AReaL config): the
// layout priced as the engine runs it (the same figure `realign simulate --engine NAME` gives for the files
// it writes), the engine's best plan beside it, and errors that name the script's key.
#include <gtest/gtest.h>

#include <fstream>

#include "apps/cli_run.h"
#include "core/json.h"

namespace realign {
namespace {

using testing::run_realign;

const std::string kScript = std::string(REALIGN_SOURCE_DIR) + "/examples/verl_grpo_qwen2.5_7b_8xh100.sh";

// The config and plan `import --out dir` wrote, priced by simulate, give the import's figure.
void expect_simulate_gives(const std::string& dir, const std::string& engine, double script_s) {
  const auto sim = run_realign("simulate " + dir + "/config.json --plan " + dir +
                               "/script_plan.json --engine " + engine + " --json");
  ASSERT_EQ(sim.code, 0) << sim.out;
  EXPECT_NEAR(Json::parse(sim.out)["as_engine_runs_it"]["iteration_time_s"].get<double>(), script_s,
              1e-9 * script_s);
}

TEST(ImportCli, PricesTheScriptAsSimulateDoesAndSearchesTheBestPlanBesideIt) {
  const std::string dir = ::testing::TempDir() + "verl_import";
  const auto r = run_realign("import " + kScript + " --engine verl plan.time_budget_s=1 --json --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["config"]["models"]["actor"], "qwen2.5-7b");
  EXPECT_EQ(j["config"]["cluster"]["device"], "h100-sxm");
  const double script_s = j["as_engine_runs_it"]["iteration_time_s"].get<double>();
  EXPECT_GT(script_s, 0);
  EXPECT_TRUE(j["as_engine_runs_it"]["fits"].get<bool>());
  EXPECT_GT(j["best"]["iteration_time_s"].get<double>(), 0);
  EXPECT_NEAR(j["speedup"].get<double>(), script_s / j["best"]["iteration_time_s"].get<double>(), 1e-9);
  expect_simulate_gives(dir, "verl", script_s);
  EXPECT_TRUE(std::ifstream(dir + "/planned/launch.sh").good());
}

// The script's workload at several sizes under its engine: its own size marked, the notes kept; an objective
// other than time picks among the sizes the script's cluster holds. The mean response length it assumed is
// noted (scripts give the cap).
TEST(ImportCli, FrontierOfTheScriptsWorkloadUnderItsEngine) {
  const auto r = run_realign("import " + kScript + " --engine verl plan.max_steps=2000 --frontier --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["engine"], "verl");
  ASSERT_GE(j["frontier"].size(), 4u);
  int own = 0;
  for (const Json& p : j["frontier"]) own += p["config_size"].get<bool>() && p["devices"].get<int64_t>() == 8;
  EXPECT_EQ(own, 1);
  bool mean_noted = false;
  for (const Json& n : j["notes"]) mean_noted |= n.get<std::string>().rfind("batch.gen_len: scripts give", 0) == 0;
  EXPECT_TRUE(mean_noted) << j["notes"].dump();
  const auto cheap = run_realign("import " + kScript + " --engine verl plan.max_steps=2000 plan.objective=gpu_hours");
  ASSERT_EQ(cheap.code, 0) << cheap.out;
  EXPECT_NE(cheap.out.find("plan.objective gpu_hours picks "), std::string::npos) << cheap.out;
  EXPECT_NE(cheap.out.find("a quarter of it to all of it"), std::string::npos) << cheap.out;
}

// AReaL streams generation asynchronously (read as train.partial_rollout); made synchronous on the command
// line, the import prices it synchronous and says so, rather than refusing a key the user never wrote.
TEST(ImportCli, AStreamingScriptMadeSynchronousIsPricedSynchronous) {
  const std::string areal = std::string(REALIGN_SOURCE_DIR) + "/examples/areal_grpo_qwen2.5_7b_8xh100.yaml";
  const auto r = run_realign("import " + areal + " --engine areal train.staleness=0 plan.max_steps=2000 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_FALSE(j["config"]["train"].contains("partial_rollout")) << j["config"].dump();
  bool noted = false;
  for (const Json& n : j["notes"]) noted |= n.get<std::string>().rfind("train.partial_rollout: ", 0) == 0;
  EXPECT_TRUE(noted) << j["notes"].dump();
  const auto streaming = run_realign("import " + areal + " --engine areal plan.max_steps=2000 --json");
  ASSERT_EQ(streaming.code, 0) << streaming.out;
  EXPECT_EQ(Json::parse(streaming.out)["config"]["train"]["partial_rollout"], true);
}

TEST(ImportCli, OverridesAndEnvironmentChangeTheReadWorkload) {
  const auto r =
      run_realign("import " + kScript +
                  " --engine verl --env NNODES=2 cluster.device=a100-80gb plan.time_budget_s=1 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["config"]["cluster"]["nodes"], 2);
  EXPECT_EQ(j["config"]["cluster"]["device"], "a100-80gb");
  for (const auto& note : j["notes"])
    EXPECT_EQ(note.get<std::string>().find("cluster.device"), std::string::npos);
}

TEST(ImportCli, OpenRlhfScriptIsPricedOnTheZeroStageItSets) {
  const auto r = run_realign(
      "import " + std::string(REALIGN_SOURCE_DIR) +
      "/examples/openrlhf_grpo_qwen2.5_7b_8xh100.sh --engine openrlhf plan.time_budget_s=1 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["config"]["algorithm"], "grpo");
  EXPECT_EQ(j["config"]["batch"]["samples_per_prompt"], 8);
  // The script's ZeRO-3 placement only, though the same layout runs on ZeRO-2 too.
  ASSERT_EQ(j["as_engine_runs_it"]["placements"].size(), 1u);
  EXPECT_GT(j["as_engine_runs_it"]["pricing"]["zero3_gather_s"].get<double>(), 0);
  EXPECT_GT(j["best"]["iteration_time_s"].get<double>(), 0);
}

TEST(ImportCli, ArealConfigIsPricedAsSimulateDoesOnItsOwnBackend) {
  const std::string dir = ::testing::TempDir() + "areal_import";
  const auto r =
      run_realign("import " + std::string(REALIGN_SOURCE_DIR) +
                  "/examples/areal_grpo_qwen2.5_7b_8xh100.yaml --engine areal plan.time_budget_s=1 "
                  "--json --compare --out " +
                  dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["config"]["models"]["actor"], "qwen2.5-7b");
  EXPECT_EQ(j["config"]["train"]["staleness"], 2);
  ASSERT_EQ(j["as_engine_runs_it"]["placements"].size(), 1u);  // FSDP's, as actor.backend says
  const double script_s = j["as_engine_runs_it"]["iteration_time_s"].get<double>();
  expect_simulate_gives(dir, "areal", script_s);
  EXPECT_TRUE(std::ifstream(dir + "/planned/config.yaml").good());
  // --compare: the same workload (staleness 2 included) on every other engine, or why it cannot run it.
  ASSERT_EQ(j["other_engines"].size(), 3u);
  for (const Json& o : j["other_engines"]) {
    SCOPED_TRACE(o.dump());
    EXPECT_NE(o["engine"], "areal");
    EXPECT_TRUE(o.contains("problem") || o["iteration_time_s"].get<double>() > 0);
  }
  EXPECT_EQ(j["other_engines"][0]["engine"], "verl");
  // Asynchronous, as the workload is.
  EXPECT_EQ(j["other_engines"][0]["placement"].get<std::string>().rfind("fully_async", 0), 0u);
}

TEST(ImportCli, ErrorsNameTheScriptsKeyOrTheFlag) {
  const std::string dir = ::testing::TempDir();
  auto script_with = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::ifstream in(kScript);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find(from), from.size(), to);
    std::ofstream(dir + name) << text;
    return dir + name;
  };
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {kScript + " --engine areal", "names no YAML config (--config FILE) for the run's settings"},
      {script_with("unknown_model.sh", "Qwen/Qwen2.5-7B-Instruct", "org/unknown-13b") + " --engine verl",
       "actor_rollout_ref.model.path: 'org/unknown-13b' is no built-in model shape and no config.json was "
       "found for it (org/unknown-13b/config.json, "},
      {script_with("group_of_one.sh", "rollout.n=5", "rollout.n=1") + " --engine verl",
       "actor_rollout_ref.rollout.n: GRPO compares samples within a group"},
      {script_with("unset.sh", "trainer.nnodes=$NNODES", "trainer.nnodes=$NODES") + " --engine verl",
       "trainer.nnodes: '$NODES' is ${NODES}, which the script does not set (nor --env)"},
      {dir + "missing.sh --engine verl", "missing.sh: cannot open"},
      {kScript + " --engine verl --env NNODES", "--env: 'NNODES': write NAME=VALUE"},
      {script_with("tp8.sh", "TP=4", "TP=8") + " --engine verl", "tp 8 does not divide 28 attention heads"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = run_realign("import " + c.args);
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace realign
