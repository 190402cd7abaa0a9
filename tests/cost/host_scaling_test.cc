#include "cost/host_scaling.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

HardwareProfile cpu_profile_with_probe(double probe_s) {
  HardwareProfile p = builtin_profile(builtin_device("cpu-gloo", "device"));
  p.host_probe_s = {probe_s, "measured on the fitting machine (test)"};
  return p;
}

// A machine whose probe takes twice as long computes at half the rate and pays twice the per-layer cost;
// what the probe's ratio does not tell (links, memory, the sharing of cores, the other fixed costs, peaks)
// stays as fitted.
TEST(HostScaling, ASlowerProbeHalvesTheRatesAndDoublesThePerLayerCost) {
  const HardwareProfile fitted = cpu_profile_with_probe(0.002);
  const HardwareProfile here = scaled_to_host(fitted, 0.004, "a test CPU");
  EXPECT_DOUBLE_EQ(host_speed_ratio(fitted, 0.004), 2.0);
  EXPECT_DOUBLE_EQ(here.gemm_efficiency.value, fitted.gemm_efficiency.value / 2);
  EXPECT_DOUBLE_EQ(here.attention_efficiency.value, fitted.attention_efficiency.value / 2);
  EXPECT_DOUBLE_EQ(here.layer_launch_overhead_s.value, 2 * fitted.layer_launch_overhead_s.value);
  for (const Coefficient* scaled : {&here.gemm_efficiency, &here.layer_launch_overhead_s})
    EXPECT_EQ(
        scaled->source.rfind("scaled x2.000 to a test CPU by its host probe (4.000 ms here, 2.000 ms where "
                             "fitted); ",
                             0),
        0u)
        << scaled->source;
  for (auto [a, b] : {std::pair{&here.intra_node_latency_s, &fitted.intra_node_latency_s},
                      {&here.intra_node_bandwidth, &fitted.intra_node_bandwidth},
                      {&here.memory_bandwidth, &fitted.memory_bandwidth},
                      {&here.decode_bandwidth_efficiency, &fitted.decode_bandwidth_efficiency},
                      {&here.oversubscribed_wait_s, &fitted.oversubscribed_wait_s},
                      {&here.compute_slots_per_node, &fitted.compute_slots_per_node},
                      {&here.call_overhead_s, &fitted.call_overhead_s},
                      {&here.step_overhead_s, &fitted.step_overhead_s},
                      {&here.iteration_overhead_s, &fitted.iteration_overhead_s},
                      {&here.decode_step_overhead_s, &fitted.decode_step_overhead_s},
                      {&here.peak_flops, &fitted.peak_flops}})
    EXPECT_EQ(*a, *b);
  // The result describes the machine it was carried to: carried again with the same probe, it stays.
  EXPECT_DOUBLE_EQ(here.host_probe_s.value, 0.004);
  EXPECT_EQ(scaled_to_host(here, 0.004, "a test CPU").gemm_efficiency.value, here.gemm_efficiency.value);
}

TEST(HostScaling, AProfileWithoutAProbeIsNotScaled) {
  const HardwareProfile h100 = builtin_profile(builtin_device("h100-sxm", "device"));
  ASSERT_EQ(h100.host_probe_s.value, 0);
  EXPECT_EQ(scaled_to_host(h100, 0.004, "a test CPU"), h100);
  EXPECT_EQ(host_speed_ratio(h100, 0.004), 1.0);
}

// The probe time round-trips through a profile's JSON, is optional, and must be a positive time with a
// source.
TEST(HostScaling, TheProbeTimeRoundTripsAndIsChecked) {
  const HardwareProfile p = cpu_profile_with_probe(0.0021);
  const Json j = to_json(p);
  EXPECT_EQ(hardware_profile_from_json(j, "profile"), p);
  EXPECT_FALSE(to_json(cpu_profile_with_probe(0)).contains("host_probe_s"));
  Json bad = j;
  bad["host_probe_s"]["value"] = -1;
  try {
    hardware_profile_from_json(bad, "profile");
    ADD_FAILURE() << "a negative probe time was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "profile.host_probe_s.value") << e.what();
  }
  bad = j;
  bad["host_probe_s"]["source"] = "";
  try {
    hardware_profile_from_json(bad, "profile");
    ADD_FAILURE() << "a probe time without a source was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "profile.host_probe_s.source") << e.what();
  }
}

}  // namespace
}  // namespace realign
