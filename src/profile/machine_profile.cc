#include "profile/machine_profile.h"

#include <algorithm>
#include <c10/core/GradMode.h>
#include <cstdio>
#include <thread>

#include <ATen/Parallel.h>

#include "core/torch_compat.h"
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

ShapeSet shape_set(const at::Device& device, bool quick) {
  ShapeSet s;
  if (!device.is_cuda()) {
    // Token-by-hidden products of a ~100M..1B model: QKV/out projections and the MLP, plus a square one.
    s.gemms = quick ? std::vector<ShapeSet::Gemm>{{256, 512, 512}, {256, 512, 2048}, {256, 2048, 512}}
                    : std::vector<ShapeSet::Gemm>{{1024, 1024, 1024}, {1024, 1024, 4096}, {1024, 4096, 1024},
                                                  {2048, 2048, 2048}};
    // The depth sweep: one GEMM with its reduction K shortened, as tensor parallelism shortens a row-parallel
    // matmul's. Relative to the deepest, about the depth of the shapes above.
    s.sweep_rows = quick ? 256 : 2048;
    s.sweep_cols = quick ? 512 : 2048;
    s.depths = quick ? std::vector<int64_t>{64, 128, 256, 512} : std::vector<int64_t>{128, 256, 512, 1024, 2048};
    s.attentions = quick ? std::vector<ShapeSet::Attention>{{1, 4, 128, 64}, {2, 8, 256, 64}}
                         : std::vector<ShapeSet::Attention>{{2, 8, 512, 64}, {4, 16, 1024, 64}};
    s.copy_bytes = int64_t(quick ? 16 : 256) << 20;
    s.decode_hidden = quick ? 512 : 2048;
    s.decode_head_dim = 64;
    s.decodes = quick ? std::vector<ShapeSet::Decode>{{1, 128}, {4, 256}, {8, 512}}
                      : std::vector<ShapeSet::Decode>{{1, 256}, {8, 512}, {32, 1024}};
    s.launch_model = "llama-tiny";
    s.launch_layer = "tiny";
    return s;
  }
  // A GPU: the shapes of a 1B..8B model's training step (8k..16k tokens a micro-batch), each big enough
  // (>= ~70 GFLOP, ~0.1 ms on an H100) that launch and synchronisation are a small part of its time.
  // Projections (hidden 2048 and 4096) and the MLP of a 1B model (2048 <-> 8192), plus a large square-ish one.
  s.gemms = quick ? std::vector<ShapeSet::Gemm>{{8192, 2048, 8192}, {8192, 8192, 2048}, {16384, 4096, 4096}}
                  : std::vector<ShapeSet::Gemm>{{8192, 2048, 2048},
                                                {8192, 2048, 8192},
                                                {8192, 8192, 2048},
                                                {16384, 4096, 4096},
                                                {4096, 8192, 8192}};
  // The depth sweep: a row-parallel matmul's K (an MLP's 8192) shortened by tensor parallelism up to 16- or
  // 32-way, into an output of hidden 4096.
  s.sweep_rows = 8192;
  s.sweep_cols = 4096;
  s.depths = quick ? std::vector<int64_t>{1024, 2048, 4096, 8192}
                   : std::vector<int64_t>{256, 512, 1024, 2048, 4096, 8192};
  // Heads of 128, 16 to 32 of them, sequences of 1k..4k tokens (b x h x s^2 <= 512M scores: 1 GiB in bf16
  // where the unfused path materialises them).
  s.attentions = quick ? std::vector<ShapeSet::Attention>{{2, 16, 2048, 128}, {1, 32, 4096, 128}}
                       : std::vector<ShapeSet::Attention>{{4, 16, 1024, 128}, {2, 32, 2048, 128},
                                                          {1, 32, 4096, 128}};
  s.fused_attention = torch_compat::kHasFusedAttention;
  // Far past any cache (an H100's L2 is 50 MB), as a training step's or decode's weights and activations are.
  s.copy_bytes = int64_t(quick ? 1 : 2) << 30;
  // A 7B/8B model's hidden: its 4096 x 16384 bf16 weight (128 MiB) outgrows L2, as a real decode's weights do;
  // heads of 128; batch 1..64 over 512..2048 tokens of context (the largest KV cache: 1 GiB).
  s.decode_hidden = 4096;
  s.decode_head_dim = 128;
  s.decodes = quick ? std::vector<ShapeSet::Decode>{{1, 512}, {16, 1024}, {64, 2048}}
                    : std::vector<ShapeSet::Decode>{{1, 512}, {4, 1024}, {16, 2048}, {32, 1024}, {64, 2048}};
  // A layer of Llama 3.2 1B (hidden 2048, MLP 8192, 32 heads over 8 KV heads): llama-tiny's would time only
  // the host. A 256-token vocabulary: embedding and head cancel in the difference anyway.
  s.launch_model = "llama3.2-1b";
  s.launch_layer = "llama3.2-1b";
  s.launch_vocab = 256;
  return s;
}

MachineProfile measure_machine(const DeviceSpec& device_spec, const ProfileOptions& o, const ProgressFn& progress) {
  MachineProfile out;
  out.profile = default_profile(device_spec);
  const auto opts = at::TensorOptions().device(o.device).dtype(o.dtype);
  const std::string where = "measured by `realign profile` (" + describe_device(o) + ")";
  const OpTimer timer = o.timer ? o.timer : OpTimer([&](const std::string&, const std::function<void()>& op) {
    return time_op(op, o.device);
  });

  using Gemm = ShapeSet::Gemm;
  const ShapeSet shapes = shape_set(o.device, o.quick);
  const std::vector<Gemm>& gemms = shapes.gemms;
  const int64_t sweep_rows = shapes.sweep_rows, sweep_cols = shapes.sweep_cols;
  const std::vector<int64_t>& depths = shapes.depths;
  const auto& attentions = shapes.attentions;
  const auto& decodes = shapes.decodes;
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
    const at::Tensor allowed = shapes.fused_attention ? causal.logical_not() : at::Tensor();
    const double t = timer(
        name, [&] {
          if (shapes.fused_attention) {  // as model/attention.cc runs it on a GPU: a mask, true = may attend
            torch_compat::fused_attention(q, k, v, allowed);
            return;
          }
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
  const int64_t copy_elems = shapes.copy_bytes / int64_t(c10::elementSize(o.dtype));
  const at::Tensor src = at::randn({copy_elems}, opts);
  at::Tensor dst = at::empty_like(src);
  const double copy_t = timer(copy_name, [&] { dst.copy_(src); });
  const double bandwidth = 2.0 * double(src.nbytes()) / copy_t;  // read + write
  out.measurements.push_back({"copy " + format_bytes(double(src.nbytes())), copy_t, bandwidth, "B/s"});

  // Decode: one token per sequence against a weight matrix and a KV cache: memory-bound.
  std::vector<double> decode_fractions;
  const int64_t hidden = shapes.decode_hidden, head_dim = shapes.decode_head_dim;
  const at::Tensor w = at::randn({hidden, 4 * hidden}, opts);
  for (const auto& [batch, context] : decodes) {
    const std::string name = "decode batch " + std::to_string(batch) + " context " + std::to_string(context);
    tick(name);
    const int64_t heads = hidden / head_dim;
    const at::Tensor x = at::randn({batch, hidden}, opts);
    const at::Tensor kv = at::randn({batch, heads, context, head_dim}, opts);
    const at::Tensor qh = at::randn({batch, heads, 1, head_dim}, opts);
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
  // The fixed cost of one layer of realign's own transformer: a forward of a tiny batch (8 tokens) through a
  // 3-layer model minus that of a 1-layer one (embedding and head cancel), halved. The FLOPs are negligible,
  // so what remains is the per-op cost (kernel launches, dispatch, allocation) that dominates small models.
  // On a GPU the layer is a real one (shape_set): its weights' read (~120 MB, ~30 us of HBM) runs while the
  // host dispatches the next ops, and llama-tiny's would have timed the host and the synchronisation alone.
  auto tiny_forward = [&](int64_t layers) {
    ModelSpec spec = builtin_model(shapes.launch_model);
    spec.n_layers = layers;
    if (shapes.launch_vocab > 0) spec.vocab = shapes.launch_vocab;
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
  out.measurements.push_back({"one " + shapes.launch_layer + " transformer layer forward", launch_t, 0, ""});

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
  p.attention_efficiency = {std::min(1.0, median(attention_rates) / peak),
                            where + ": causal attention, " +
                                (shapes.fused_attention ? "the libtorch's fused kernel with a mask (as the runtime)"
                                                        : "unfused")};
  p.memory_bandwidth = {bandwidth, where + ": large tensor copy, read + write"};
  p.decode_bandwidth_efficiency = {std::min(1.0, median(decode_fractions)),
                                   where + ": decode steps (weights + KV cache) against the copy bandwidth"};
  p.layer_launch_overhead_s = {launch_t,
                               where + ": a " + shapes.launch_layer + " layer of realign's transformer, forward"};
  if (o.device.is_cpu())
    p.compute_slots_per_node = {double(std::max(1u, std::thread::hardware_concurrency())),
                                "counted by `realign profile`: this machine's hardware threads"};
  if (progress) progress(total, total, "done");
  return out;
}

}  // namespace realign::profile
