#include "profile/machine_profile.h"

#include <algorithm>
#include <array>
#include <c10/core/GradMode.h>
#include <cstdio>
#include <thread>

#include <ATen/Parallel.h>

#include "core/units.h"
#include "graph/model_spec.h"
#include "model/init.h"
#include "model/transformer.h"
#include "profile/op_timer.h"

namespace realign::profile {
namespace {

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string describe_device(const ProfileOptions& o) {
  return std::string(o.device.is_cuda() ? "cuda" : "cpu") + ", " + std::string(c10::toString(o.dtype)) +
         (o.device.is_cpu() ? ", " + std::to_string(at::get_num_threads()) + " threads" : "");
}

}  // namespace

MachineProfile measure_machine(const DeviceSpec& device_spec, const ProfileOptions& o, const ProgressFn& progress) {
  MachineProfile out;
  out.profile = default_profile(device_spec);
  const auto opts = at::TensorOptions().device(o.device).dtype(o.dtype);
  const std::string where = "measured by `realign profile` (" + describe_device(o) + ")";
  const OpTimer timer = o.timer ? o.timer : OpTimer([&](const std::string&, const std::function<void()>& op) {
    return time_op(op, o.device);
  });

  struct Gemm {
    int64_t m, k, n;
  };
  // Token-by-hidden products of a ~100M..1B model: QKV/out projections and the MLP, plus a square one.
  const std::vector<Gemm> gemms = o.quick ? std::vector<Gemm>{{256, 512, 512}, {256, 512, 2048}, {256, 2048, 512}}
                                          : std::vector<Gemm>{{1024, 1024, 1024}, {1024, 1024, 4096},
                                                              {1024, 4096, 1024}, {2048, 2048, 2048}};
  using Shape4 = std::array<int64_t, 4>;
  using Shape2 = std::array<int64_t, 2>;
  const std::vector<Shape4> attentions = o.quick ? std::vector<Shape4>{{1, 4, 128, 64}, {2, 8, 256, 64}}
                                                 : std::vector<Shape4>{{2, 8, 512, 64}, {4, 16, 1024, 64}};  // b h s d
  const std::vector<Shape2> decodes = o.quick ? std::vector<Shape2>{{1, 128}, {4, 256}, {8, 512}}
                                              : std::vector<Shape2>{{1, 256}, {8, 512}, {32, 1024}};  // batch, context
  // The depth sweep: one GEMM with its reduction K shortened, as tensor parallelism shortens a row-parallel
  // matmul's. Relative to the deepest, about the depth of the shapes above.
  const int64_t sweep_rows = o.quick ? 256 : 2048, sweep_cols = o.quick ? 512 : 2048;
  const std::vector<int64_t> depths =
      o.quick ? std::vector<int64_t>{64, 128, 256, 512} : std::vector<int64_t>{128, 256, 512, 1024, 2048};
  const int total = int(gemms.size() + depths.size() + attentions.size() + decodes.size()) + 2;
  int step = 0;
  auto tick = [&](const std::string& what) {
    if (progress) progress(step, total, what);
    ++step;
  };

  auto gemm_rate = [&](const Gemm& g) {
    const std::string name = "gemm " + std::to_string(g.m) + "x" + std::to_string(g.k) + "x" + std::to_string(g.n);
    tick(name);
    const at::Tensor a = at::randn({g.m, g.k}, opts), b = at::randn({g.k, g.n}, opts);
    at::Tensor c = at::empty({g.m, g.n}, opts);
    const double t = timer(name, [&] { at::mm_out(c, a, b); });
    const double rate = 2.0 * double(g.m * g.k * g.n) / t;
    out.measurements.push_back({name, t, rate, "FLOP/s"});
    return rate;
  };
  std::vector<double> gemm_rates;
  for (const auto& g : gemms) gemm_rates.push_back(gemm_rate(g));
  std::vector<double> depth_rates;
  for (const int64_t k : depths) depth_rates.push_back(gemm_rate(Gemm{sweep_rows, k, sweep_cols}));

  std::vector<double> attention_rates;
  for (const auto& [b, h, len, d] : attentions) {
    const std::string name = "attention b" + std::to_string(b) + " h" + std::to_string(h) + " s" +
                             std::to_string(len) + " d" + std::to_string(d);
    tick(name);
    const at::Tensor q = at::randn({b, h, len, d}, opts), k = at::randn({b, h, len, d}, opts),
                     v = at::randn({b, h, len, d}, opts);
    const at::Tensor causal = at::ones({len, len}, at::TensorOptions().device(o.device).dtype(at::kBool)).triu(1);
    const double t = timer(
        name, [&] {
          at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(double(d)));
          scores.masked_fill_(causal, -std::numeric_limits<float>::infinity());
          at::matmul(at::softmax(scores, -1), v);
        });
    // Causal attention does half the work of the full products; count what a fused kernel would.
    const double rate = 2.0 * 2.0 * double(b * h * len * len * d) / 2.0 / t;
    attention_rates.push_back(rate);
    out.measurements.push_back({name, t, rate, "FLOP/s"});
  }

  const std::string copy_name = "memory bandwidth (copy)";
  tick(copy_name);
  const int64_t copy_elems = (o.quick ? 4 : 64) * (1 << 20) / int64_t(c10::elementSize(o.dtype)) * 4;
  const at::Tensor src = at::randn({copy_elems}, opts);
  at::Tensor dst = at::empty_like(src);
  const double copy_t = timer(copy_name, [&] { dst.copy_(src); });
  const double bandwidth = 2.0 * double(src.nbytes()) / copy_t;  // read + write
  out.measurements.push_back({"copy " + format_bytes(double(src.nbytes())), copy_t, bandwidth, "B/s"});

  // Decode: one token per sequence against a weight matrix and a KV cache: memory-bound.
  std::vector<double> decode_fractions;
  const int64_t hidden = o.quick ? 512 : 2048;
  const at::Tensor w = at::randn({hidden, 4 * hidden}, opts);
  for (const auto& [batch, context] : decodes) {
    const std::string name = "decode batch " + std::to_string(batch) + " context " + std::to_string(context);
    tick(name);
    const int64_t heads = hidden / 64;
    const at::Tensor x = at::randn({batch, hidden}, opts);
    const at::Tensor kv = at::randn({batch, heads, context, 64}, opts);
    const at::Tensor qh = at::randn({batch, heads, 1, 64}, opts);
    const double t = timer(name, [&] {
      at::mm(x, w);
      at::matmul(at::softmax(at::matmul(qh, kv.transpose(-1, -2)), -1), kv);
    });
    const double bytes = double(w.nbytes()) + double(kv.nbytes());
    decode_fractions.push_back(bytes / t / bandwidth);
    out.measurements.push_back({name, t, bytes / t, "B/s"});
  }

  const std::string launch_name = "per-layer launch overhead";
  tick(launch_name);
  // The fixed cost of one layer of realign's own transformer: a forward of a tiny batch through a tiny
  // 3-layer model minus that of a 1-layer one (embedding and head cancel), halved. The FLOPs are negligible,
  // so what remains is the per-op cost (kernel launches, dispatch, allocation) that dominates small models.
  auto tiny_forward = [&](int64_t layers) {
    ModelSpec spec = builtin_model("llama-tiny");
    spec.n_layers = layers;
    model::Transformer m(spec, HeadKind::kLanguageModel, {}, o.dtype, o.device);
    m.load_shards(model::init_full_params(spec, HeadKind::kLanguageModel, 1));
    model::TokenBatch b;
    const auto i64 = at::TensorOptions().dtype(at::kLong).device(o.device);
    b.tokens = at::zeros({1, 8}, i64);
    b.positions = at::arange(8, i64).unsqueeze(0);
    b.segments = at::ones({1, 8}, i64.dtype(at::kInt));
    c10::NoGradGuard no_grad;
    return timer(launch_name + " (" + std::to_string(layers) + " layers)", [&] { m.forward(b); });
  };
  const double launch_t = std::max(0.0, (tiny_forward(3) - tiny_forward(1)) / 2.0);
  out.measurements.push_back({"one tiny transformer layer forward", launch_t, 0, ""});

  HardwareProfile& p = out.profile;
  const double peak = p.peak_flops.value;
  p.gemm_efficiency = {std::min(1.0, median(gemm_rates) / peak), where + ": median of transformer-shaped GEMMs"};
  p.gemm_depth_efficiency = {1.0, where + ": " + std::to_string(sweep_rows) + " x K x " +
                                      std::to_string(sweep_cols) +
                                      " GEMMs relative to the deepest (a shallower one taken no faster than a "
                                      "deeper, against measurement noise)"};
  p.gemm_depth_efficiency.of = "gemm_depth";
  for (size_t i = depths.size() - 1; i-- > 0;) depth_rates[i] = std::min(depth_rates[i], depth_rates[i + 1]);
  for (size_t i = 0; i < depths.size(); ++i)
    p.gemm_depth_efficiency.points.emplace_back(double(depths[i]), depth_rates[i] / depth_rates.back());
  p.attention_efficiency = {std::min(1.0, median(attention_rates) / peak), where + ": causal attention, unfused"};
  p.memory_bandwidth = {bandwidth, where + ": large tensor copy, read + write"};
  p.decode_bandwidth_efficiency = {std::min(1.0, median(decode_fractions)),
                                   where + ": decode steps (weights + KV cache) against the copy bandwidth"};
  p.layer_launch_overhead_s = {launch_t, where + ": a tiny layer of realign's transformer, forward"};
  if (o.device.is_cpu())
    p.compute_slots_per_node = {double(std::max(1u, std::thread::hardware_concurrency())),
                                "counted by `realign profile`: this machine's hardware threads"};
  if (progress) progress(total, total, "done");
  return out;
}

}  // namespace realign::profile
