#include "profile/host_probe.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

namespace realign::profile {
namespace {

TEST(HostProbe, TimesAStepOnOneThreadAndRestoresTheThreadCount) {
  at::set_num_threads(2);
  const double t = measure_host_probe_s();
  EXPECT_EQ(at::get_num_threads(), 2);
  // A forward and backward of llama-tiny over 512 tokens: well above a microsecond, well below a second on
  // any machine that runs the test suite.
  EXPECT_GT(t, 1e-5);
  EXPECT_LT(t, 1.0);
}

TEST(HostProbe, OnlyACpuClusterIsProbed) {
  Cluster gpus;
  gpus.device = builtin_device("h100-sxm", "device");
  EXPECT_EQ(host_probe_s_for(gpus), 0.0);
  Cluster cpus;
  cpus.device = builtin_device("cpu-gloo", "device");
  EXPECT_GT(host_probe_s_for(cpus), 0.0);
}

}  // namespace
}  // namespace realign::profile
