#include "cost/hardware_profile.h"

#include <gtest/gtest.h>

#include "cost/explain.h"

namespace realign {
namespace {

HardwareProfile h100() { return default_profile(builtin_device("h100-sxm", "device")); }

TEST(HardwareProfile, DefaultsComeFromTheDeviceSpecWithSources) {
  const DeviceSpec d = builtin_device("h100-sxm", "device");
  const HardwareProfile p = default_profile(d);
  EXPECT_EQ(p.device, "h100-sxm");
  EXPECT_EQ(p.peak_flops.value, d.peak_flops);
  EXPECT_EQ(p.memory_bandwidth.value, d.memory_bandwidth);
  EXPECT_EQ(p.inter_node_bandwidth.value, d.inter_node_bandwidth);
  EXPECT_EQ(p.intra_node_latency_s.value, d.intra_node_latency);
  for (const auto& [name, c] : p.coefficients()) {
    EXPECT_GT(c->value, 0) << name;
    EXPECT_FALSE(c->source.empty()) << name;
  }
  EXPECT_LE(p.gemm_efficiency.value, 1.0);
}

TEST(HardwareProfile, JsonRoundTrip) {
  HardwareProfile p = h100();
  p.gemm_efficiency = {0.41, "measured by realign profile on test"};
  const Json j = to_json(p);
  EXPECT_EQ(j.at("version"), HardwareProfile::kVersion);
  EXPECT_EQ(hardware_profile_from_json(j, "profile"), p);
  EXPECT_EQ(hardware_profile_from_json(Json::parse(j.dump()), "profile"), p);
  EXPECT_FALSE(hardware_profile_from_json(j, "profile") == h100());
}

std::string error_of(const Json& j) {
  try {
    hardware_profile_from_json(j, "profile");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(HardwareProfile, RejectsOtherVersionsAndMissingFields) {
  Json j = to_json(h100());
  j["version"] = 1;  // version 1 lacked call_overhead_s and step_overhead_s
  EXPECT_NE(error_of(j).find("profile.version"), std::string::npos) << error_of(j);
  j = to_json(h100());
  j.erase("version");
  EXPECT_NE(error_of(j).find("profile.version"), std::string::npos) << error_of(j);
  j = to_json(h100());
  j.erase("gemm_efficiency");
  EXPECT_NE(error_of(j).find("profile.gemm_efficiency"), std::string::npos) << error_of(j);
  j = to_json(h100());
  j["inter_node_bandwidth"].erase("source");
  EXPECT_NE(error_of(j).find("profile.inter_node_bandwidth.source"), std::string::npos) << error_of(j);
  j = to_json(h100());
  j["attention_efficiency"]["value"] = 1.5;
  EXPECT_NE(error_of(j).find("profile.attention_efficiency.value"), std::string::npos) << error_of(j);
  j = to_json(h100());
  j["gemm_eficiency"] = j["gemm_efficiency"];
  EXPECT_NE(error_of(j).find("gemm_eficiency"), std::string::npos) << error_of(j);
}

TEST(Explain, ListsEveryCoefficientWithValueAndSource) {
  HardwareProfile p = h100();
  p.decode_bandwidth_efficiency = {0.55, "measured: decode benchmark"};
  const auto lines = explain(p);
  for (const auto& [name, c] : p.coefficients()) {
    bool found = false;
    for (const auto& l : lines)
      if (l.name == name) {
        found = true;
        EXPECT_EQ(l.value, c->value);
        EXPECT_EQ(l.source, c->source);
      }
    EXPECT_TRUE(found) << name;
  }
  const std::string text = format_explain(lines);
  EXPECT_NE(text.find("decode_bandwidth_efficiency = 0.55"), std::string::npos) << text;
  EXPECT_NE(text.find("measured: decode benchmark"), std::string::npos);
  EXPECT_NE(text.find("optimizer_bytes_per_param = 12"), std::string::npos);
}

}  // namespace
}  // namespace realign
