// `realign train`'s device choice as a user meets it (runtime/device_placement.h, decided in cmd_train.cc): a
// GPU cluster on a machine without CUDA trains on the CPU saying so, train.device=cuda there is refused
// before any worker starts, and train.device takes auto, cpu or cuda only.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"
#include "core/torch_compat.h"

namespace realign {
namespace {

std::string example(const std::string& name) { return std::string(REALIGN_SOURCE_DIR) + "/examples/" + name; }

// One RL step of the main job on one worker, no SFT and one held-out prompt: seconds on a CPU.
std::string one_step(const std::string& out) {
  return "train " + example("addition_ppo.yaml") +
         " cluster.devices_per_node=1 train.steps=1 train.sft_stage.steps=0 train.eval_prompts=1"
         " train.checkpoint_every=0 --no-progress --no-summary --out " +
         ::testing::TempDir() + "/" + out;
}

TEST(TrainDevice, AGpuClusterWithoutCudaTrainsOnTheCpuAndSaysWhy) {
  if (torch_compat::cuda_device_count() > 0)
    GTEST_SKIP() << "this machine has a GPU: the GPU cluster runs there";
  const testing::CliResult r =
      testing::run_realign(one_step("gpu_cluster_on_cpu") + " cluster.device=h100-sxm");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("cluster.device h100-sxm is a GPU, but this process sees no CUDA device"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("running on the CPU in fp32"), std::string::npos) << r.out;
}

TEST(TrainDevice, ACpuClusterSaysNothingAboutDevices) {
  const testing::CliResult r = testing::run_realign(one_step("cpu_cluster"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("CUDA"), std::string::npos) << r.out;
}

TEST(TrainDevice, CudaWithoutAGpuIsRefusedNamingTrainDevice) {
  if (torch_compat::cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const testing::CliResult r = testing::run_realign(one_step("cuda_without_gpu") + " train.device=cuda");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("train.device: cuda: this process sees no CUDA device (libtorch "), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("steps 1..1"), std::string::npos) << r.out;  // refused before training
}

TEST(TrainDevice, OnlyAutoCpuAndCudaAreDevices) {
  const testing::CliResult r = testing::run_realign(one_step("gpu_word") + " train.device=gpu");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("train.device: 'gpu' is not one of auto, cpu, cuda"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace realign
