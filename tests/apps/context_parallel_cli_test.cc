// Context parallelism at the command line: `realign simulate --plan` prices a plan file whose calls split
// their sequences (cp, ring or Ulysses) and reports each call's cp; `realign train` refuses such a plan
// before any worker starts, naming plan.mode, since realign's runtime runs every sequence whole on a rank.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_run.h"
#include "core/config_file.h"
#include "core/json.h"

namespace realign {
namespace {

using testing::run_realign;

std::string example(const std::string& name) { return std::string(REALIGN_SOURCE_DIR) + "/examples/" + name; }

TEST(ContextParallelCli, SimulateTakesAPlanFileWithCp) {
  const std::string plan = ::testing::TempDir() + "/cp_plan.json";
  const std::string config = example("grpo_qwen2.5_7b_8xh100.yaml");
  const auto saved = run_realign("plan " + config + " plan.max_steps=200 --out " + plan);
  ASSERT_EQ(saved.code, 0) << saved.out;
  Json j = load_config_file(plan);
  for (Json& m : j["mfcs"])
    if (m["name"] == "actor_train") {
      // dp 8 x 8 micro-batches fit; dp 2 x cp 4 in 8 gives each rank as many tokens at once.
      m["mesh"] = "0-7";
      m["dp"] = 2;
      m["tp"] = 1;
      m["pp"] = 1;
      m["cp"] = 4;
      m["cp_kind"] = "ulysses";
      m["micro_batches"] = 8;
    }
  std::ofstream(plan) << j.dump(2);
  const auto r = run_realign("simulate " + config + " --plan " + plan + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json out = Json::parse(r.out);
  bool seen = false;
  for (const Json& m : out["mfcs"])
    if (m["name"] == "actor_train") {
      EXPECT_EQ(m["cp"], 4);
      EXPECT_EQ(m["cp_kind"], "ulysses");
      seen = true;
    }
  EXPECT_TRUE(seen) << r.out;
  // Qwen2.5-7B's 28 heads do not split over 8 Ulysses ranks: refused naming the field.
  for (Json& m : j["mfcs"])
    if (m["name"] == "actor_train") m["dp"] = 1, m["cp"] = 8;
  std::ofstream(plan) << j.dump(2);
  const auto bad = run_realign("simulate " + config + " --plan " + plan);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find(".cp: cp 8 (Ulysses) does not divide the 28 attention heads"), std::string::npos)
      << bad.out;
}

TEST(ContextParallelCli, TrainRefusesItNamingPlanMode) {
  const std::string plan = ::testing::TempDir() + "/cp_cpu_plan.json";
  const std::string config = example("addition_grpo.yaml") + " cluster.devices_per_node=2 batch.gen_len=4";
  const auto saved = run_realign("plan " + config + " --out " + plan);
  ASSERT_EQ(saved.code, 0) << saved.out;
  Json j = load_config_file(plan);
  for (Json& m : j["mfcs"])
    if (m["name"] == "actor_train") m["mesh"] = "0-1", m["dp"] = 1, m["tp"] = 1, m["pp"] = 1, m["cp"] = 2;
  std::ofstream(plan) << j.dump(2);
  const auto r = run_realign("train " + config + " plan.mode=file plan.file=" + plan + " --out " +
                             ::testing::TempDir() + "/cp_run");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("plan.mode: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("context-parallel ranks (cp); realign's runtime runs every sequence whole"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace realign
