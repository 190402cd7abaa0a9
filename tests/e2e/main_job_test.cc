// The main job as the README runs it (examples/addition_ppo.yaml, 4 local workers, the searched plan), with
// asynchronous generation: train.staleness=1 still teaches the task.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/json.h"
#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;

// Held-out greedy accuracy after the SFT stage (step 60) and at the end (step 210), from metrics.jsonl.
std::pair<double, double> accuracy_after_sft_and_rl(const std::string& run_dir) {
  const auto m = testing::read_metrics(run_dir);
  EXPECT_TRUE(m.count(60) && m.at(60).contains("eval/accuracy")) << run_dir;
  EXPECT_TRUE(m.count(210) && m.at(210).contains("eval/accuracy")) << run_dir;
  if (!m.count(60) || !m.count(210)) return {0, 0};
  return {m.at(60).value("eval/accuracy", 0.0), m.at(210).value("eval/accuracy", 0.0)};
}

// The mean gain over seeds 1-3 must exceed 0.10. What moves it is the seed and the CPU, not a sample of
// prompts: the 256 held-out prompts are the same in every run, and a run is deterministic on one machine (the
// weight version behind a batch is exact, not a timing). Over seeds, on a 2-core AMD EPYC: +0.168, +0.117,
// +0.316 (mean 0.200, twice the bar; the weakest seed alone clears it); the synchronous run of seed 1 gains
// +0.25. Between CPUs, BLAS kernels round differently and the runs drift apart: the synchronous run of seed 1
// ends at 0.602 on an Intel Xeon and on one AMD EPYC, 0.586 on another AMD EPYC (0.016 apart; the staleness-1
// runs were not compared across CPUs). The mean's margin over the bar, 0.10, is six times that spread.
TEST(MainJob, StalenessOneRaisesHeldOutAccuracyOverSft) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  double gain = 0;
  for (int seed : {1, 2, 3}) {
    const std::string dir = tmp.file("seed" + std::to_string(seed));
    std::string out;
    ASSERT_EQ(testing::run_realign("train " + config + " train.staleness=1 train.seed=" + std::to_string(seed) +
                                       " --preset-steps 0 --no-progress --out " + dir,
                                   &out),
              0)
        << out;
    const auto [sft, rl] = accuracy_after_sft_and_rl(dir);
    std::printf("seed %d: held-out accuracy after SFT %.3f, after PPO with staleness 1 %.3f\n", seed, sft, rl);
    gain += (rl - sft) / 3;
    EXPECT_EQ(testing::read_metrics(dir).at(210)["weights/lag"], 1);
  }
  EXPECT_GT(gain, 0.10) << "mean gain of held-out accuracy over three seeds";
}

}  // namespace
}  // namespace realign
