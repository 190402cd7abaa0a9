// The rank's device and precision from the cluster, train.device / train.dtype and the GPUs seen: the CPU
// path is what realign ran before (the config's dtype, no master weights), a GPU cluster with CUDA runs bf16
// with fp32 master weights on cuda:LOCAL_RANK, and one without CUDA falls back to the CPU saying why.
#include "runtime/device_placement.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace realign::runtime {
namespace {

const DeviceSpec kCpu = builtin_device("cpu-gloo", "cluster.device");
const DeviceSpec kH100 = builtin_device("h100-sxm", "cluster.device");

TEST(DevicePlacement, ACpuClusterRunsOnTheCpuInTheConfigsDtypeWhateverGpusThereAre) {
  for (int gpus : {0, 8})
    for (const char* dtype : {"fp32", "bf16"}) {
      const DevicePlacement p = place_rank(kCpu, "auto", dtype, gpus, 3, 4, "1.13.0");
      EXPECT_FALSE(p.cuda);
      EXPECT_EQ(p.dtype, dtype);
      EXPECT_FALSE(p.fp32_master);
      EXPECT_EQ(p.note, "");
    }
  EXPECT_EQ(describe(place_rank(kCpu, "auto", "fp32", 0, 0, 1, "1.13.0")), "cpu, fp32");
}

TEST(DevicePlacement, AGpuClusterWithCudaRunsEachLocalRankOnItsGpuInBf16WithFp32Masters) {
  for (int rank = 0; rank < 8; ++rank) {
    const DevicePlacement p = place_rank(kH100, "auto", "fp32", 8, rank, 8, "2.11.0");
    EXPECT_TRUE(p.cuda);
    EXPECT_EQ(p.cuda_index, rank);
    EXPECT_EQ(p.dtype, "bf16");
    EXPECT_TRUE(p.fp32_master);
    EXPECT_EQ(p.note, "");
  }
  EXPECT_EQ(describe(place_rank(kH100, "auto", "fp32", 8, 5, 8, "2.11.0")),
            "cuda:5, bf16 with fp32 master weights");
}

TEST(DevicePlacement, MoreLocalRanksThanGpusShareThemRoundRobinAndSaySo) {
  const DevicePlacement p = place_rank(kH100, "auto", "fp32", 1, 3, 4, "2.11.0");
  EXPECT_TRUE(p.cuda);
  EXPECT_EQ(p.cuda_index, 0);
  EXPECT_NE(p.note.find("4 local ranks share 1 CUDA device"), std::string::npos) << p.note;
  EXPECT_EQ(place_rank(kH100, "auto", "fp32", 2, 3, 4, "2.11.0").cuda_index, 1);
}

TEST(DevicePlacement, AGpuClusterWithoutCudaFallsBackToTheCpuNamingTheDevice) {
  const DevicePlacement p = place_rank(kH100, "auto", "bf16", 0, 0, 1, "1.13.0");
  EXPECT_FALSE(p.cuda);
  EXPECT_EQ(p.dtype, "bf16");
  EXPECT_FALSE(p.fp32_master);
  EXPECT_NE(p.note.find("cluster.device h100-sxm is a GPU"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("libtorch 1.13.0"), std::string::npos) << p.note;
}

// The Error place_rank throws for train.device `device` on a machine with `gpus` CUDA devices.
Error placement_error(const std::string& device, int gpus) {
  try {
    place_rank(kCpu, device, "fp32", gpus, 0, 1, "1.13.0");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "train.device=" << device << " with " << gpus << " GPUs: no error";
  return Error("", "");
}

TEST(DevicePlacement, TrainDeviceForcesTheChoiceAndCudaWithoutAGpuIsAnError) {
  EXPECT_FALSE(place_rank(kH100, "cpu", "fp32", 8, 0, 1, "2.11.0").cuda);
  EXPECT_TRUE(place_rank(kCpu, "cuda", "fp32", 1, 0, 1, "2.11.0").cuda);
  const Error none = placement_error("cuda", 0);
  EXPECT_EQ(none.path(), "train.device");
  EXPECT_NE(std::string(none.what()).find("no CUDA device"), std::string::npos) << none.what();
  const Error unknown = placement_error("gpu", 1);
  EXPECT_EQ(unknown.path(), "train.device");
  EXPECT_NE(std::string(unknown.what()).find("auto, cpu, cuda"), std::string::npos) << unknown.what();
}

}  // namespace
}  // namespace realign::runtime
