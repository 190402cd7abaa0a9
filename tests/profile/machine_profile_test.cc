#include "profile/machine_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "../plan/test_graphs.h"
#include "cost/simulator.h"
#include "search/presets.h"
#include "search/simulator_evaluator.h"

namespace realign::profile {
namespace {

TEST(MachineProfile, RealQuickRunGivesAValidProfile) {
  ProfileOptions o;
  o.quick = true;
  const auto r = measure_machine(builtin_device("cpu-gloo", "spec"), o);
  const HardwareProfile& p = r.profile;
  for (const auto* c : {&p.gemm_efficiency, &p.attention_efficiency, &p.decode_bandwidth_efficiency}) {
    EXPECT_GT(c->value, 0);
    EXPECT_LE(c->value, 1);
    EXPECT_NE(c->source.find("measured by `realign profile`"), std::string::npos);
  }
  EXPECT_GT(p.memory_bandwidth.value, 1e8);
  EXPECT_GT(p.layer_launch_overhead_s.value, 0);
  EXPECT_EQ(hardware_profile_from_json(to_json(p), "p.json"), p);
  EXPECT_GE(r.measurements.size(), 9u);
}

// A fake op table with H100-like figures: GEMMs and attention at half of peak (GEMMs `gemm_scale` times
// slower), a copy at ~3.4 TB/s, decode steps near that bandwidth (`decode_scale` times slower).
OpTimer fake_table(double gemm_scale, double decode_scale) {
  return [=](const std::string& name, const std::function<void()>&) {
    const double half_peak = 0.5 * 989e12;
    long long m = 0, k = 0, n = 0;
    if (std::sscanf(name.c_str(), "gemm %lldx%lldx%lld", &m, &k, &n) == 3)
      return 2.0 * double(m * k * n) / half_peak * gemm_scale;
    long long b = 0, h = 0, len = 0, d = 0;
    if (std::sscanf(name.c_str(), "attention b%lld h%lld s%lld d%lld", &b, &h, &len, &d) == 4)
      return 2.0 * double(b * h * len * len * d) / half_peak;
    if (name.rfind("decode", 0) == 0) return 4e-6 * decode_scale;
    if (name.rfind("memory", 0) == 0) return 1e-5;  // 32 MiB moved: ~3.4 TB/s
    return 1e-5;
  };
}

// GEMMs of the depth sweep (256 x K x 512 in a quick run) at `rate_of_depth(K)` of half the peak; other ops
// as fake_table.
OpTimer fake_depths(const std::function<double(double)>& rate_of_depth) {
  const OpTimer rest = fake_table(1.0, 1.0);
  return [=](const std::string& name, const std::function<void()>& op) {
    long long m = 0, k = 0, n = 0;
    if (std::sscanf(name.c_str(), "gemm %lldx%lldx%lld", &m, &k, &n) == 3 && m == 256 && n == 512)
      return 2.0 * double(m * k * n) / (0.5 * 989e12 * rate_of_depth(double(k)));
    return rest(name, op);
  };
}

// The depth sweep becomes gemm_depth_efficiency: each depth's rate relative to the deepest; a shallower GEMM
// measured faster than a deeper one (noise) is taken at the deeper one's rate, so the curve loads.
TEST(MachineProfile, DepthSweepGivesTheDepthCurve) {
  ProfileOptions o;
  o.quick = true;
  o.timer = fake_depths([](double k) { return std::min(1.0, k / 512); });
  const HardwareProfile p = measure_machine(builtin_device("h100-sxm", "spec"), o).profile;
  ASSERT_TRUE(p.gemm_depth_efficiency.is_curve());
  const std::vector<std::pair<double, double>> expected = {{64, 0.125}, {128, 0.25}, {256, 0.5}, {512, 1.0}};
  ASSERT_EQ(p.gemm_depth_efficiency.points.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(p.gemm_depth_efficiency.points[i].first, expected[i].first);
    EXPECT_NEAR(p.gemm_depth_efficiency.points[i].second, expected[i].second, 1e-12);
  }
  EXPECT_NEAR(p.gemm_depth_efficiency.at(256), 0.5, 1e-12);
  o.timer = fake_depths([](double k) { return k == 128 ? 0.9 : std::min(1.0, k / 512); });  // a noisy 128
  const HardwareProfile noisy = measure_machine(builtin_device("h100-sxm", "spec"), o).profile;
  EXPECT_NEAR(noisy.gemm_depth_efficiency.points[1].second, 0.5, 1e-12);
  HardwareProfile loadable = noisy;
  loadable.layer_launch_overhead_s.value = 1e-6;  // the fake table times no launch overhead
  EXPECT_EQ(hardware_profile_from_json(to_json(loadable), "p.json"), loadable);
}

double estimate(const HardwareProfile& profile, const std::string& mfc) {
  const DataflowGraph g = testing::ppo_7b();
  const Cluster c = testing::h100(2);
  Simulator sim(g, c, profile);
  SimulatorEvaluator ev(sim);
  const auto plan = make_preset("co-located", g, c, ev);
  const auto r = sim.run(*plan);
  const auto& call = r.calls[size_t(g.mfc_index(mfc))];
  return call.end_s - call.start_s;
}

TEST(MachineProfile, CalibrationMovesTheEstimateTowardTheMeasurement) {
  ProfileOptions o;
  o.quick = true;
  o.timer = fake_table(1.0, 1.0);
  const DeviceSpec spec = builtin_device("h100-sxm", "spec");
  const HardwareProfile base = measure_machine(spec, o).profile;
  o.timer = fake_table(2.0, 1.0);
  const HardwareProfile slow_gemm = measure_machine(spec, o).profile;
  o.timer = fake_table(1.0, 3.0);
  const HardwareProfile slow_decode = measure_machine(spec, o).profile;
  EXPECT_NEAR(slow_gemm.gemm_efficiency.value, base.gemm_efficiency.value / 2, 1e-12);
  // Slower GEMMs make training slower; slower decode steps make generation slower; nothing gets faster.
  EXPECT_GT(estimate(slow_gemm, "actor_train"), estimate(base, "actor_train") * 1.2);
  EXPECT_GE(estimate(slow_gemm, "actor_gen"), estimate(base, "actor_gen"));
  EXPECT_GT(estimate(slow_decode, "actor_gen"), estimate(base, "actor_gen") * 1.2);
  EXPECT_GE(estimate(slow_decode, "actor_train"), estimate(base, "actor_train"));  // its optimizer is memory-bound
}

}  // namespace
}  // namespace realign::profile
