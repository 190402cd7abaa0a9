// A plan `realign plan` saves for a CPU config runs in `realign train` on the same config (plan.mode=file):
// the searched plan and every preset, on 4 local workers, one SFT and one RL step each. The planner's side of
// this (no plan for such a config breaks the runtime's limits) is checked without torch in
// tests/apps/runtime_plans_test.cc; this runs the plans.
#include <gtest/gtest.h>

#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;

// The overrides plan and train share: the plan's micro-batches depend on the batch, so both see the same one.
const std::string kShared =
    " cluster.devices_per_node=4 batch.prompts=8 train.steps=1 train.sft_stage.steps=1 "
    "train.sft_stage.batch=8"
    " train.eval_prompts=4 train.threads=1 train.checkpoint_every=0 plan.max_steps=300";

// Plans `example` in `mode`, saves the plan, trains on it; expects an RL step in the run's metrics.
void plan_then_train(const TempDir& tmp, const std::string& example, const std::string& mode) {
  SCOPED_TRACE(example + " plan.mode=" + mode);
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/" + example;
  const std::string name = example.substr(0, example.find('.')) + "-" + mode;
  const std::string plan = tmp.file(name + ".json"), run = tmp.file(name);
  std::string out;
  ASSERT_EQ(testing::run_realign("plan " + config + kShared + " plan.mode=" + mode + " --out " + plan, &out),
            0)
      << out;
  ASSERT_EQ(testing::run_realign("train " + config + kShared + " plan.mode=file plan.file=" + plan +
                                     " --no-progress --preset-steps 0 --out " + run,
                                 &out),
            0)
      << out;
  bool rl = false;
  for (const auto& [step, rec] : testing::read_metrics(run)) rl |= rec.value("stage", "") == "rl";
  EXPECT_TRUE(rl) << "no RL step recorded in " << run;
}

TEST(PlanThenTrain, EveryModeOfRealignPlanRunsInRealignTrain) {
  TempDir tmp;
  for (const char* mode : {"search", "co-located", "heuristic", "interleaving", "disaggregated"})
    plan_then_train(tmp, "addition_ppo.yaml", mode);
  plan_then_train(tmp, "addition_grpo.yaml", "co-located");  // issue 28's second config
}

}  // namespace
}  // namespace realign
