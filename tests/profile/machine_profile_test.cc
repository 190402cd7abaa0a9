#include "profile/machine_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <map>

#include "../plan/test_graphs.h"
#include "core/torch_compat.h"
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

// The CPU's shape sets are exactly those the CPU profiles (and the tests above) were measured with.
TEST(ShapeSet, CpuShapesAreUnchanged) {
  using G = std::vector<std::array<int64_t, 3>>;
  using A = std::vector<std::array<int64_t, 4>>;
  using D = std::vector<std::array<int64_t, 2>>;
  auto gemms = [](const ShapeSet& s) {
    G out;
    for (const auto& g : s.gemms) out.push_back({g.m, g.k, g.n});
    return out;
  };
  auto attentions = [](const ShapeSet& s) {
    A out;
    for (const auto& a : s.attentions) out.push_back({a.batch, a.heads, a.seq, a.head_dim});
    return out;
  };
  auto decodes = [](const ShapeSet& s) {
    D out;
    for (const auto& d : s.decodes) out.push_back({d.batch, d.context});
    return out;
  };
  for (const bool quick : {true, false}) {
    SCOPED_TRACE(quick ? "quick" : "full");
    const ShapeSet s = shape_set(at::kCPU, quick);
    const G cpu_gemms = quick ? G{{256, 512, 512}, {256, 512, 2048}, {256, 2048, 512}}
                              : G{{1024, 1024, 1024}, {1024, 1024, 4096}, {1024, 4096, 1024}, {2048, 2048, 2048}};
    EXPECT_EQ(gemms(s), cpu_gemms);
    EXPECT_EQ(s.sweep_rows, quick ? 256 : 2048);
    EXPECT_EQ(s.sweep_cols, quick ? 512 : 2048);
    const std::vector<int64_t> cpu_depths =
        quick ? std::vector<int64_t>{64, 128, 256, 512} : std::vector<int64_t>{128, 256, 512, 1024, 2048};
    EXPECT_EQ(s.depths, cpu_depths);
    const A cpu_attentions = quick ? A{{1, 4, 128, 64}, {2, 8, 256, 64}} : A{{2, 8, 512, 64}, {4, 16, 1024, 64}};
    EXPECT_EQ(attentions(s), cpu_attentions);
    EXPECT_FALSE(s.fused_attention);
    // 4 (64) MiB of fp32 elements times 4, as before the shape sets: 16 (256) MiB.
    EXPECT_EQ(s.copy_bytes, (quick ? 4 : 64) * (int64_t(1) << 20) / 4 * 4 * 4);
    EXPECT_EQ(s.decode_hidden, quick ? 512 : 2048);
    EXPECT_EQ(s.decode_head_dim, 64);
    const D cpu_decodes = quick ? D{{1, 128}, {4, 256}, {8, 512}} : D{{1, 256}, {8, 512}, {32, 1024}};
    EXPECT_EQ(decodes(s), cpu_decodes);
    EXPECT_EQ(s.launch_model, "llama-tiny");
    EXPECT_EQ(s.launch_layer, "tiny");
    EXPECT_EQ(s.launch_vocab, 0);
  }
}

// On a GPU every shape is transformer-sized (kernels, not their launch, set its time) and fits in memory; no GPU
// needed: the shape set is only chosen, not run.
TEST(ShapeSet, CudaShapesAreGpuSized) {
  const double bf16 = 2, gib = double(int64_t(1) << 30);
  size_t quick_count = 0, full_count = 0;
  for (const bool quick : {true, false}) {
    SCOPED_TRACE(quick ? "quick" : "full");
    const ShapeSet s = shape_set(at::Device(at::kCUDA), quick);
    (quick ? quick_count : full_count) =
        s.gemms.size() + s.depths.size() + s.attentions.size() + s.decodes.size();
    ASSERT_GE(s.gemms.size(), 3u);
    for (const auto& g : s.gemms) {
      EXPECT_GE(g.m, 4096);
      EXPECT_LE(g.m, 16384);
      for (const int64_t kn : {g.k, g.n}) {
        EXPECT_GE(kn, 2048);
        EXPECT_LE(kn, 8192);
      }
      EXPECT_GE(2.0 * double(g.m) * double(g.k) * double(g.n), 6e10);  // >= ~0.1 ms at an H100's peak
      EXPECT_LT(bf16 * double(g.m * g.k + g.k * g.n + g.m * g.n), 8 * gib);
    }
    // The depth sweep: ascending, its deepest as deep as the deepest GEMM above, its rows a GPU's.
    ASSERT_GE(s.depths.size(), 4u);
    EXPECT_TRUE(std::is_sorted(s.depths.begin(), s.depths.end()));
    int64_t deepest = 0;
    for (const auto& g : s.gemms) deepest = std::max(deepest, g.k);
    EXPECT_EQ(s.depths.back(), deepest);
    EXPECT_GE(s.sweep_rows, 4096);
    EXPECT_GE(s.sweep_cols, 2048);
    ASSERT_GE(s.attentions.size(), 2u);
    for (const auto& a : s.attentions) {
      EXPECT_GE(a.seq, 1024);
      EXPECT_LE(a.seq, 4096);
      EXPECT_GE(a.heads, 16);
      EXPECT_LE(a.heads, 32);
      EXPECT_EQ(a.head_dim, 128);
      // q, k, v, and where the unfused path runs, the scores three times over (product, scaled, softmax).
      const double scores = double(a.batch * a.heads) * double(a.seq * a.seq);
      EXPECT_LT(bf16 * (3.0 * double(a.batch * a.heads * a.seq * a.head_dim) + 3.0 * scores), 8 * gib);
    }
    EXPECT_EQ(s.fused_attention, torch_compat::kHasFusedAttention);
    EXPECT_GE(s.copy_bytes, int64_t(1) << 30);
    EXPECT_LE(2.0 * double(s.copy_bytes), 8 * gib);  // source and destination
    EXPECT_GE(s.decode_hidden, 2048);
    EXPECT_EQ(s.decode_hidden % s.decode_head_dim, 0);
    // The decode weight outgrows an H100's 50 MB L2, so that it is read from HBM each step.
    EXPECT_GT(bf16 * double(4 * s.decode_hidden * s.decode_hidden), 50e6);
    ASSERT_GE(s.decodes.size(), 3u);
    int64_t max_batch = 0;
    for (const auto& d : s.decodes) {
      EXPECT_GE(d.batch, 1);
      EXPECT_LE(d.batch, 64);
      EXPECT_GE(d.context, 512);
      EXPECT_LE(d.context, 2048);
      max_batch = std::max(max_batch, d.batch);
      EXPECT_LT(bf16 * double(d.batch * s.decode_hidden * d.context), 8 * gib);  // the KV cache
    }
    EXPECT_EQ(s.decodes.front().batch, 1);
    EXPECT_EQ(max_batch, 64);
    const ModelSpec layer = builtin_model(s.launch_model);
    EXPECT_GE(layer.hidden, 2048);
    EXPECT_GT(s.launch_vocab, 0);  // embedding and head cancel: no need for the model's own 128k
    EXPECT_NE(s.launch_layer, "tiny");
  }
  EXPECT_LT(quick_count, full_count);
}

}  // namespace
}  // namespace realign::profile
