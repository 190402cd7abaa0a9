// Train calls on subsets of the devices: `realign train` on 4 local worker processes with the actor and the
// critic trained on disjoint halves (as the interleaving and disaggregated presets place them). Each model
// lives only on its home's devices; reallocation brings it to every other call, including to devices outside
// its home; statistics of a train call reach rank 0 from the call's devices; checkpoints gather a model whose
// home excludes rank 0 and resume cuts it back.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;
namespace fs = std::filesystem;

const std::string kConfig = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
const std::string kCommon =
    " cluster.devices_per_node=4 batch.prompts=16 train.steps=3 train.sft_stage.steps=3 train.eval_prompts=8"
    " train.threads=1 --no-progress";

std::string plan_file(const TempDir& tmp, const std::string& name, const std::string& mfcs) {
  testing::write_file(tmp.file(name), R"({"name": ")" + name + R"(", "mfcs": [)" + mfcs + "]}");
  return tmp.file(name);
}

// The actor trains on devices 0-1 and the critic on 2-3; the reference lives on 2-3 (its first call), so RL
// starts by moving the actor's parameters there; the critic's inference runs on every device, 0-1 included,
// where the critic has no parameters of its own.
const char* kSplit = R"(
 {"name": "actor_gen", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1})";

// Every call on all 4 devices (dp 4).
const char* kColocated = R"(
 {"name": "actor_gen", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1})";

// The co-located plan trains with dp 4, the split plan with dp 2: losses are means over the whole batch and
// mini-batches are segments of it, so the dp degree does not change the updates either.
TEST(SubsetMeshes, ActorAndCriticOnDisjointHalvesGiveTheCoLocatedCurve) {
  TempDir tmp;
  std::string out;
  const std::string a = tmp.file("colocated"), b = tmp.file("split");
  ASSERT_EQ(testing::run_realign("train " + kConfig + " plan.mode=file plan.file=" +
                                     plan_file(tmp, "colocated.json", kColocated) + kCommon +
                                     " train.checkpoint_every=0 --out " + a,
                                 &out),
            0)
      << out;
  ASSERT_EQ(testing::run_realign("train " + kConfig +
                                     " plan.mode=file plan.file=" + plan_file(tmp, "split.json", kSplit) +
                                     kCommon + " train.checkpoint_every=0 --out " + b,
                                 &out),
            0)
      << out;
  const auto x = testing::read_metrics(a), y = testing::read_metrics(b);
  ASSERT_EQ(x.size(), y.size());
  ASSERT_TRUE(y.count(6)) << out;  // 3 SFT steps, then RL steps 4-6
  // The critic's inference on devices 0-1, outside its home, needs the whole critic sent from 2-3.
  EXPECT_GT(y.at(5)["realloc/bytes"].get<double>(), 0);
  // Every SFT and RL statistic, including those of critic_train.
  EXPECT_GE(testing::expect_same_curve(
                x, y,
                {"reward/mean", "kl/mean", "loss/policy", "loss/value", "entropy", "loss/sft",
                 "grad_norm/actor", "grad_norm/critic", "value/mean", "eval/accuracy"}),
            3 * 2 + 3 * 8);
}

// The mirror image, with the actor tensor-parallel on devices 2-3 (rank 0 holds nothing of it: its SFT
// losses, evaluation and checkpoint all come from 2-3) and the critic on 0-1. A resume from a mid-RL
// checkpoint reproduces the uninterrupted run exactly.
TEST(SubsetMeshes, ActorAwayFromRankZeroCheckpointsAndResumesExactly) {
  TempDir tmp;
  const std::string plan = plan_file(tmp, "mirror.json", R"(
 {"name": "actor_gen", "mesh": "2-3", "dp": 1, "tp": 2, "pp": 1},
 {"name": "ref_inf", "mesh": "0-1", "dp": 1, "tp": 2, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "2-3", "dp": 1, "tp": 2, "pp": 1},
 {"name": "critic_train", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1})");
  const std::string run_dir = tmp.file("run");
  std::string out;
  ASSERT_EQ(testing::run_realign("train " + kConfig + " plan.mode=file plan.file=" + plan + kCommon +
                                     " train.checkpoint_every=4 --out " + run_dir,
                                 &out),
            0)
      << out;
  const auto full = testing::read_metrics(run_dir);
  ASSERT_TRUE(full.count(6)) << out;
  EXPECT_TRUE(full.at(0).contains("eval/accuracy"));
  EXPECT_TRUE(full.at(3).contains("loss/sft"));
  EXPECT_TRUE(fs::exists(run_dir + "/checkpoints/step-4/actor"));

  const std::string resumed = tmp.file("resumed");
  fs::copy(run_dir, resumed, fs::copy_options::recursive);
  fs::remove_all(resumed + "/checkpoints/step-6");
  testing::write_file(resumed + "/checkpoints/latest", "step-4\n");
  ASSERT_EQ(testing::run_realign("train --resume " + resumed + " --no-progress", &out), 0) << out;
  const auto again = testing::read_metrics(resumed);
  for (int64_t step : {5, 6}) {
    ASSERT_TRUE(again.count(step)) << out;
    for (const auto& [key, value] : full.at(step).items())
      if (key.rfind("time/", 0) != 0) {
        EXPECT_EQ(again.at(step)[key], value) << "step " << step << " " << key;
      }
  }
}

// A PPO mini-batch is a segment of the whole batch shared out over the train call's dp ranks: a segment
// smaller than dp would leave a rank without rows, which the plan's validation refuses, naming the call's dp.
TEST(SubsetMeshes, TooManyMiniBatchesForTheDpDegreeIsAnError) {
  TempDir tmp;
  std::string out;
  EXPECT_NE(testing::run_realign("train " + kConfig + " plan.mode=file plan.file=" +
                                     plan_file(tmp, "colocated.json", kColocated) + kCommon +
                                     " batch.prompts=4 batch.mini_batches=2 --out " + tmp.file("run"),
                                 &out),
            0);
  EXPECT_NE(out.find("mfcs[4].dp: dp 4 exceeds the 2 sequences of a training step (4 in 2 mini-batches)"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace realign
