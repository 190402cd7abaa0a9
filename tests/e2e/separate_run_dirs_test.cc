// A job launched as torchrun launches it (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), each rank on its own "host" with its own run directory, as on a cluster without a shared
// filesystem: the plan reaches the other ranks from rank 0 over the group, not through a file, and the run
// gives the metrics of the same cluster started locally.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;

TEST(SeparateRunDirs, RanksWithTheirOwnRunDirectoriesGiveTheLocalRunsMetrics) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string common =
      " cluster.devices_per_node=2 plan.mode=search batch.prompts=8 train.steps=2 train.sft_stage.steps=2"
      " train.eval_prompts=4 train.threads=1 train.checkpoint_every=0 --no-progress --preset-steps 0";
  std::string out;
  ASSERT_EQ(testing::run_realign("train " + config + common + " --out " + tmp.file("local"), &out), 0) << out;

  // Two ranks started by hand, one "host" each: rank 0 with --out host0, rank 1 with --out host1.
  const int port = 29000 + int(::getpid() % 2000);
  std::string script;
  for (int rank : {0, 1})
    script += "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
              " WORLD_SIZE=2 RANK=" + std::to_string(rank) + " LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 " +
              REALIGN_BINARY + " train " + config + common + " --out " +
              tmp.file("host" + std::to_string(rank)) + " > " +
              tmp.file("rank" + std::to_string(rank) + ".log") + " 2>&1 & p" + std::to_string(rank) + "=$!; ";
  script += "wait $p0; a=$?; wait $p1; b=$?; exit $((a + b))";
  const int code = std::system(("bash -c '" + script + "'").c_str());
  ASSERT_EQ(WEXITSTATUS(code), 0) << testing::read_file(tmp.file("rank0.log"))
                                  << testing::read_file(tmp.file("rank1.log"));
  EXPECT_TRUE(std::filesystem::exists(tmp.file("host0") + "/plan.json"));
  EXPECT_FALSE(std::filesystem::exists(tmp.file("host1") + "/metrics.jsonl")) << "rank 1 writes no run files";

  const auto local = testing::read_metrics(tmp.file("local")),
             hosts = testing::read_metrics(tmp.file("host0"));
  ASSERT_EQ(local.size(), hosts.size());
  for (const auto& [step, rec] : local)
    for (const auto& [key, value] : rec.items())
      if (key.rfind("time/", 0) != 0) {
        EXPECT_EQ(hosts.at(step)[key], value) << "step " << step << " " << key;
      }
}

}  // namespace
}  // namespace realign
