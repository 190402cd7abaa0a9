#include "cost/hardware_profile.h"

#include <gtest/gtest.h>

#include "core/read_file.h"
#include "cost/explain.h"
#include "cost/shipped_profiles.h"

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
    if (std::string(name) != "collective_overhead_s") {
      EXPECT_GT(c->value, 0) << name;
    }
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

// An engine's own pass efficiency on the device round-trips and is optional; a value outside (0, 1] or an
// entry without a source is refused naming it.
TEST(HardwareProfile, EnginePassEfficienciesRoundTripAndAreChecked) {
  HardwareProfile p = h100();
  EXPECT_FALSE(to_json(p).contains("engine_pass_efficiency"));
  p.engine_pass_efficiency["nemo-rl"] = {0.25, "fitted to NeMo-RL's published runs (test)"};
  const Json j = to_json(p);
  EXPECT_EQ(hardware_profile_from_json(j, "profile"), p);
  EXPECT_FALSE(hardware_profile_from_json(j, "profile") == h100());
  Json bad = j;
  bad["engine_pass_efficiency"]["nemo-rl"]["value"] = 1.5;
  EXPECT_NE(error_of(bad).find("profile.engine_pass_efficiency.nemo-rl.value: a fraction in (0, 1]"),
            std::string::npos)
      << error_of(bad);
  bad = j;
  bad["engine_pass_efficiency"]["nemo-rl"]["source"] = " ";
  EXPECT_NE(error_of(bad).find("engine_pass_efficiency.nemo-rl.source"), std::string::npos) << error_of(bad);
  bad = j;
  bad["engine_pass_efficiency"] = 0.25;
  EXPECT_NE(error_of(bad).find("engine name -> {value, source}"), std::string::npos) << error_of(bad);
  // The decoding counterpart, read and checked alike.
  HardwareProfile q = h100();
  q.engine_decode_efficiency["nemo-rl"] = {0.8, "fitted to NeMo-RL's published runs (test)"};
  EXPECT_EQ(hardware_profile_from_json(to_json(q), "profile"), q);
  EXPECT_FALSE(q == h100());
  bad = to_json(q);
  bad["engine_decode_efficiency"]["nemo-rl"]["value"] = 0;
  EXPECT_NE(error_of(bad).find("profile.engine_decode_efficiency.nemo-rl.value: a fraction in (0, 1]"),
            std::string::npos)
      << error_of(bad);
}

// A version-4 profile (a measured or calibrated one from before the depth curve) still loads, its GEMMs
// independent of their depth; everything else as written.
TEST(HardwareProfile, ReadsAVersionFourProfileWithoutTheDepthCurve) {
  Json j = to_json(h100());
  j["version"] = 4;
  j.erase("gemm_depth_efficiency");
  const HardwareProfile p = hardware_profile_from_json(j, "profile");
  EXPECT_FALSE(p.gemm_depth_efficiency.is_curve());
  EXPECT_EQ(p.gemm_depth_efficiency.at(512), 1.0);
  EXPECT_NE(p.gemm_depth_efficiency.source.find("version-4"), std::string::npos);
  EXPECT_EQ(p.gemm_efficiency, h100().gemm_efficiency);
  EXPECT_EQ(p.pass_efficiency, h100().pass_efficiency);
  j["version"] = 3;
  EXPECT_NE(error_of(j).find("profile.version"), std::string::npos) << error_of(j);
}

// A version-5 profile (before the all-to-all bandwidth) still loads, its all-to-alls at the all-reduce's
// intra-node bandwidth.
TEST(HardwareProfile, ReadsAVersionFiveProfileWithoutTheAllToAllBandwidth) {
  Json j = to_json(h100());
  j["version"] = 5;
  j.erase("intra_node_alltoall_bandwidth");
  const HardwareProfile p = hardware_profile_from_json(j, "profile");
  EXPECT_EQ(p.intra_node_alltoall_bandwidth.points, h100().intra_node_bandwidth.points);
  EXPECT_EQ(p.intra_node_alltoall_bandwidth.value, h100().intra_node_bandwidth.value);
  EXPECT_NE(p.intra_node_alltoall_bandwidth.source.find("version-5"), std::string::npos);
  // The shipped H100 profile prices an all-to-all below an all-reduce's NVLink SHARP bus bandwidth.
  const HardwareProfile shipped = builtin_profile(builtin_device("h100-sxm", "device"));
  EXPECT_LT(shipped.intra_node_alltoall_bandwidth.value, shipped.intra_node_bandwidth.value);
}

// A version-6 profile (before the two coefficients of oversubscribed workers) still loads and prices every
// call as it did: no wait beyond the latency's scaling, every idle worker loading the node whole.
TEST(HardwareProfile, ReadsAVersionSixProfileWithoutTheOversubscriptionCoefficients) {
  Json j = to_json(default_profile(builtin_device("cpu-gloo", "device")));
  j["version"] = 6;
  j.erase("oversubscribed_wait_s");
  j.erase("idle_worker_load");
  const HardwareProfile p = hardware_profile_from_json(j, "profile");
  EXPECT_EQ(p.oversubscribed_wait_s.value, 0);
  EXPECT_NE(p.oversubscribed_wait_s.source.find("version-6"), std::string::npos);
  EXPECT_EQ(p.idle_worker_load.value, 1);
  EXPECT_NE(p.idle_worker_load.source.find("version-6"), std::string::npos);
  // A version-7 profile must state them (the first one missing is named).
  j["version"] = 7;
  EXPECT_NE(error_of(j).find("profile.idle_worker_load: missing coefficient"), std::string::npos)
      << error_of(j);
}

// The two coefficients of oversubscribed workers may be 0 (no wait; idle workers that sleep), not below, and
// the idle load is a fraction of a core.
TEST(HardwareProfile, RejectsANegativeWaitAndAnIdleLoadAboveOne) {
  Json j = to_json(default_profile(builtin_device("cpu-gloo", "device")));
  j["oversubscribed_wait_s"]["value"] = 0;
  j["idle_worker_load"]["value"] = 0;
  EXPECT_EQ(error_of(j), "no error");
  j["oversubscribed_wait_s"]["value"] = -1e-4;
  EXPECT_NE(error_of(j).find("profile.oversubscribed_wait_s.value"), std::string::npos) << error_of(j);
  j["oversubscribed_wait_s"]["value"] = 1e-4;
  j["idle_worker_load"]["value"] = 1.5;
  EXPECT_NE(error_of(j).find("profile.idle_worker_load.value"), std::string::npos) << error_of(j);
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

TEST(HardwareProfile, ShippedProfilesCiteASourceForEveryCoefficient) {
  for (const std::string& name : builtin_device_names()) {
    const DeviceSpec d = builtin_device(name, "device");
    ASSERT_TRUE(has_shipped_profile(d)) << name;
    const HardwareProfile p = builtin_profile(d);
    EXPECT_FALSE(p == default_profile(d)) << name;
    for (const auto& [coefficient, c] : p.coefficients()) {
      EXPECT_GT(c->source.size(), 20u) << name << " " << coefficient;
      EXPECT_EQ(c->source.find("replaced by the fit"), std::string::npos) << name << " " << coefficient;
    }
    EXPECT_EQ(hardware_profile_from_json(to_json(p), "profile"), p);  // curves round-trip
  }
  // A spec edited away from the built-in device is other hardware: the shipped figures do not apply.
  DeviceSpec edited = builtin_device("h100-sxm", "device");
  edited.memory_bytes /= 2;
  EXPECT_FALSE(has_shipped_profile(edited));
  EXPECT_EQ(builtin_profile(edited), default_profile(edited));
}

// The other Hopper parts price with the H100's kernel efficiencies against their own peaks (plan/cluster.cc):
// an H20 runs GEMMs at its 148 TFLOP/s times the H100's achieved share, decodes at its 4.0 TB/s times the
// H100's GEMV share; an engine's coefficients fitted to its runs on the H100 do not carry over.
TEST(HardwareProfile, OtherHopperPartsTakeTheH100sSharesOfTheirOwnPeaks) {
  const HardwareProfile h100_profile = builtin_profile(builtin_device("h100-sxm", "device"));
  for (const std::string name : {"h20", "h200", "h800", "gb200"}) {
    const DeviceSpec d = builtin_device(name, "device");
    const HardwareProfile p = builtin_profile(d);
    EXPECT_EQ(p.device, name);
    EXPECT_EQ(p.peak_flops.value, d.peak_flops) << name;
    EXPECT_EQ(p.memory_bandwidth.value, d.memory_bandwidth) << name;
    EXPECT_EQ(p.memory_bytes.value, d.memory_bytes) << name;
    EXPECT_EQ(p.gemm_efficiency.points, h100_profile.gemm_efficiency.points) << name;
    EXPECT_EQ(p.decode_bandwidth_efficiency.value, h100_profile.decode_bandwidth_efficiency.value) << name;
    EXPECT_NE(p.gemm_efficiency.source.find("H100's figure"), std::string::npos) << name;
    EXPECT_TRUE(p.engine_pass_efficiency.empty()) << name;
    EXPECT_TRUE(p.engine_decode_efficiency.empty()) << name;
  }
  EXPECT_EQ(builtin_device("h20", "device").peak_flops, 148e12);
  EXPECT_EQ(builtin_device("h200", "device").memory_bandwidth, 4.8e12);
}

// Where a device's NVLink differs from the H100's, its shipped profile takes the H100's measured curve at the
// same share of its own link: the H800 at 200 of 450 GB/s each way, the GB200 at 900 (NVLink 5); the GB200's
// inter-node link is NVLink within its NVL72 domain (plan/cluster.cc), the H800's the H100's InfiniBand.
TEST(HardwareProfile, OtherNvlinksScaleTheH100sLinkCurves) {
  const HardwareProfile h100 = builtin_profile(builtin_device("h100-sxm", "device"));
  const HardwareProfile h800 = builtin_profile(builtin_device("h800", "device"));
  const HardwareProfile gb200 = builtin_profile(builtin_device("gb200", "device"));
  for (const double bytes : {1 << 20, 64 << 20, 1 << 30}) {
    EXPECT_NEAR(h800.intra_node_bandwidth.at(bytes), h100.intra_node_bandwidth.at(bytes) * 200.0 / 450.0,
                1.0);
    EXPECT_NEAR(gb200.intra_node_bandwidth.at(bytes), h100.intra_node_bandwidth.at(bytes) * 2.0, 1.0);
    EXPECT_NEAR(gb200.intra_node_alltoall_bandwidth.at(bytes),
                h100.intra_node_alltoall_bandwidth.at(bytes) * 2.0, 1.0);
  }
  EXPECT_EQ(h800.inter_node_bandwidth.value, h100.inter_node_bandwidth.value);
  EXPECT_EQ(gb200.inter_node_bandwidth.value, 2.0 * 370e9);  // NVLink 5 without NVLink SHARP
  EXPECT_EQ(gb200.inter_node_latency_s.value, gb200.intra_node_latency_s.value);
  EXPECT_EQ(gb200.peak_flops.value, 2.5e15);
  EXPECT_EQ(gb200.memory_bytes.value, 186e9);
  EXPECT_EQ(gb200.memory_bandwidth.value, 8e12);
}

// The device spec (plan/cluster.cc) holds a built-in device's datasheet figures once; a shipped profile
// leaves them out and builtin_profile takes them from the spec. A recalibrated profile copied over a shipped
// one brings them back: drop peak_flops and memory_bytes (and memory_bandwidth unless it was fitted) from it.
TEST(HardwareProfile, ShippedProfilesDoNotRestateTheDeviceSpec) {
  for (const auto& [name, text] : shipped_profiles()) {
    const Json j = Json::parse(text);
    const HardwareProfile spec_figures = default_profile(builtin_device(name, "device"));
    for (const auto& [coefficient, c] : spec_figures.coefficients())
      if (c->source.rfind("device spec", 0) == 0 && j.contains(coefficient)) {
        EXPECT_NE(j[coefficient]["value"].get<double>(), c->value)
            << "profiles/" << name << ".json " << coefficient;
      }
    EXPECT_EQ(builtin_profile(builtin_device(name, "device")).peak_flops.value,
              spec_figures.peak_flops.value);
  }
}

// The published data a shipped profile's sources cite (data/published/<file>.json) is in the repository and
// says where it comes from.
TEST(HardwareProfile, PublishedDataTheShippedProfilesCiteIsInTheRepository) {
  const std::string folder = "data/published/";
  int cited = 0;
  for (const auto& [name, text] : shipped_profiles()) {
    const Json profile = Json::parse(text);
    for (const auto& [coefficient, c] : profile.items()) {
      if (!c.is_object()) continue;
      // A coefficient, or engine_pass_efficiency's coefficient per engine.
      std::vector<std::string> sources;
      if (c.contains("source"))
        sources.push_back(c.at("source"));
      else
        for (const auto& [engine, e] : c.items()) sources.push_back(e.at("source"));
      for (const std::string& source : sources)
        for (size_t at = source.find(folder); at != std::string::npos; at = source.find(folder, at + 1)) {
          // A published file (its sources inside), or a folder of the launch lines read from one.
          const std::string path = source.substr(at, source.find_first_of(" ),;", at) - at);
          ++cited;
          if (path.back() == '/') {
            EXPECT_TRUE(is_directory(std::string(REALIGN_SOURCE_DIR) + "/" + path)) << name << ": " << path;
            continue;
          }
          const Json data = Json::parse(read_file(std::string(REALIGN_SOURCE_DIR) + "/" + path));
          EXPECT_TRUE(data.contains("source") || data.contains("entries"))
              << name << " " << coefficient << ": " << path;
        }
    }
  }
  EXPECT_GT(cited, 0);
}

// What a built-in device's profile leaves out of the device spec's figures is the spec's; another device's
// profile must give them.
TEST(HardwareProfile, OnlyABuiltInDevicesProfileMayLeaveOutTheSpecsFigures) {
  Json j = to_json(h100());
  j["peak_flops"]["value"] = 1;
  j.erase("memory_bytes");
  const HardwareProfile p = hardware_profile_from_json(j, "profile");
  EXPECT_EQ(p.peak_flops.value, 1);
  EXPECT_EQ(p.memory_bytes, h100().memory_bytes);
  j["device"] = "my-accelerator";
  EXPECT_NE(error_of(j).find("profile.memory_bytes: missing coefficient"), std::string::npos) << error_of(j);
}

TEST(HardwareProfile, RefusesCurvesThatFallOrLackASource) {
  const Json good = to_json(builtin_profile(builtin_device("h100-sxm", "device")));
  ASSERT_TRUE(good["gemm_efficiency"].contains("points"));
  Json j = good;
  j["gemm_efficiency"]["points"][3][1] = 0.01;  // falls after 64 rows
  EXPECT_NE(error_of(j).find("profile.gemm_efficiency.points[3]"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("must not fall"), std::string::npos) << error_of(j);
  j = good;
  j["gemm_depth_efficiency"]["points"][1][1] = 0.5;  // a deeper GEMM would run slower
  EXPECT_NE(error_of(j).find("profile.gemm_depth_efficiency.points[1]"), std::string::npos) << error_of(j);
  j = good;
  j["gemm_efficiency"]["points"][2][0] = 8;  // x goes back
  EXPECT_NE(error_of(j).find("profile.gemm_efficiency.points[2]"), std::string::npos) << error_of(j);
  j = good;
  j["gemm_efficiency"]["of"] = "message_bytes";
  EXPECT_NE(error_of(j).find("profile.gemm_efficiency.of"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("gemm_rows"), std::string::npos) << error_of(j);
  j = good;
  j["peak_flops"]["of"] = "gemm_rows";
  j["peak_flops"]["points"] = Json::array({Json::array({1, 1}), Json::array({2, 2})});
  EXPECT_NE(error_of(j).find("profile.peak_flops.of"), std::string::npos) << error_of(j);
  j = good;
  j["intra_node_bandwidth"]["source"] = " ";
  EXPECT_NE(error_of(j).find("profile.intra_node_bandwidth.source"), std::string::npos) << error_of(j);
  j = good;
  j["attention_efficiency"]["points"] = Json::array({Json::array({512, 0.2})});
  EXPECT_NE(error_of(j).find("at least 2"), std::string::npos) << error_of(j);
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
