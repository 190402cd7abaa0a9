// `realign train` on 4 local workers with generation pipelined over two stages (runtime/pipeline.h): the PPO
// curve is the co-located one (per-row seeds sample the same responses whatever the layout), and a plan the
// planner itself proposes with pipelined generation runs end to end.
#include <gtest/gtest.h>

#include <string>

#include "core/json.h"
#include "cost/hardware_profile.h"
#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;

const std::string& kCommon = testing::kShortRun;

std::string config() { return std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml"; }

Json plan_of(const std::string& run_dir) { return Json::parse(testing::read_file(run_dir + "/plan.json")); }

Json call_of(const Json& plan, const std::string& name) {
  for (const Json& m : plan["mfcs"])
    if (m["name"] == name) return m;
  ADD_FAILURE() << "no call " << name << " in " << plan.dump();
  return Json();
}

// Generation d2t1p2 with two micro-batches per pipeline (every other call co-located, d4): the same curve as
// generating with d4, within fp32 round-off.
TEST(PipelinedGenerationRun, PpoGivesTheCoLocatedCurve) {
  TempDir tmp;
  const std::string rest = R"(
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1}]})";
  testing::write_file(tmp.file("colocated.json"), R"({"name": "colocated", "mfcs": [
 {"name": "actor_gen", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},)" +
                                                      rest);
  testing::write_file(tmp.file("pipelined.json"), R"({"name": "pipelined", "mfcs": [
 {"name": "actor_gen", "mesh": "0-3", "dp": 2, "tp": 1, "pp": 2, "micro_batches": 2},)" +
                                                      rest);
  std::string out;
  for (const char* name : {"colocated", "pipelined"})
    ASSERT_EQ(testing::run_realign("train " + config() + " plan.mode=file plan.file=" +
                                       tmp.file(std::string(name) + ".json") + kCommon + tmp.file(name),
                                   &out),
              0)
        << out;
  EXPECT_EQ(call_of(plan_of(tmp.file("pipelined")), "actor_gen")["pp"], 2);
  const auto a = testing::read_metrics(tmp.file("colocated")),
             b = testing::read_metrics(tmp.file("pipelined"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_GE(testing::expect_same_curve(a, b,
                                       {"reward/mean", "kl/mean", "loss/policy", "loss/value", "entropy",
                                        "response/length", "grad_norm/actor", "grad_norm/critic"}),
            3 * 8);
}

// With devices of 1.2 MiB (the shipped CPU profile, memory cut down) no device holds a whole actor with its
// optimizer state, and the search proposes generation d1t1p2 with micro-batches on two of the four workers
// (the actor's train layout, so no parameter moves before it). `realign train plan.mode=search` runs that
// plan to the end. The search is cut by its step count, not by time, so it proposes the same plan anywhere.
TEST(PipelinedGenerationRun, PlannersPipelinedGenerationPlanRunsEndToEnd) {
  TempDir tmp;
  Json profile = to_json(builtin_profile(builtin_device("cpu-gloo", "device")));
  profile["memory_bytes"]["value"] = 1.2 * 1024 * 1024;
  testing::write_file(tmp.file("small_memory.json"), profile.dump(1));
  std::string out;
  ASSERT_EQ(testing::run_realign("train " + config() + " plan.mode=search plan.time_budget_s=300 profile=" +
                                     tmp.file("small_memory.json") + kCommon + tmp.file("run"),
                                 &out),
            0)
      << out;
  const Json gen = call_of(plan_of(tmp.file("run")), "actor_gen");
  EXPECT_GE(gen["pp"].get<int>(), 2) << "the planner no longer pipelines generation here: " << gen.dump();
  const auto m = testing::read_metrics(tmp.file("run"));
  ASSERT_TRUE(m.count(6)) << out;  // 3 SFT steps, then RL steps 4-6
  EXPECT_TRUE(m.at(6).contains("time/actor_gen_s")) << m.at(6).dump();
  EXPECT_GT(m.at(6)["response/length"].get<double>(), 0);
}

}  // namespace
}  // namespace realign
