// bench_model: forward+backward tokens/s and achieved GFLOP/s of a LLaMA (~100M parameters by default, ~1.5B
// with --preset 1.5b) against this machine's measured GEMM peak (its MFU), and batched KV-cache decode
// tokens/s at each --decode-batch against the memory-bandwidth bound of that step (weights and the KV cache
// read once per step, at the measured copy bandwidth), each phase timed apart (time_decode: prefill, the
// steps where a CUDA graph is recorded, the steady steps).
// usage: bench_model [--device cpu|cuda] [--dtype fp32|bf16] [--batch B] [--seq T] [--steps N]
//                    [--decode-batch B[,B...]] [--prompt P] [--new N] [--layers L] [--hidden H]
//                    [--head-dim D] [--preset 1.5b] [--optimizer 0|1] [--threads N] [--profile 1]
//                    [--json FILE]
// --optimizer 1: the step includes AdamW (fp32 moments; fp32 master weights when the dtype is bf16, as
// realign trains on a GPU). --profile 1: also where the train step's time goes, op by op (self time under
// torch's legacy profiler, libtorch 1.x only): the GEMMs' share and rate, and the largest other ops.
// --json FILE: the figures as one JSON object (scripts/gpu-check.sh reads it).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/host.h"
#include "core/json.h"
#include "core/torch_compat.h"
#include "model/decode_graph.h"
#include "model/generate.h"
#include "model/init.h"
#include "model/transformer.h"
#include "op_profile.h"
#include "runtime/adamw.h"

namespace rm = realign::model;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Waits for queued device work (a host read of a reduction forces it on every backend).
void sync(const at::Tensor& t) { (void)t.sum().item<double>(); }

// One greedy generation of `n` tokens timed by phase, through the pieces generate() runs (model/generate.h),
// each step to its sampled tokens on the host: the prefill with the first token; steps 1 and 2, where a CUDA
// graph is warmed up and recorded; and the mean of the later steps, what a long generation pays per token.
// `graph`: the steps through a DecodeGraph where there can be one; else launched eagerly, with the KV
// cache's fixed shapes (`fixed_shapes`, the graph's own) or its growing ones.
struct DecodeTiming {
  double prefill_s = 0, first_steps_s = 0, step_s = 0;
  realign::model::GenerateResult result;
};

DecodeTiming time_decode(realign::model::Transformer& m, const std::vector<std::vector<int64_t>>& prompts,
                         int64_t n, bool graphed, bool fixed_shapes) {
  namespace rm = realign::model;
  c10::NoGradGuard no_grad;
  DecodeTiming t;
  rm::GenerateOptions go;
  go.max_new_tokens = n;
  const at::Device dev = m.device();
  const rm::PaddedPrompts p = rm::left_pad(prompts);
  rm::KvCache cache = m.make_cache(p.tokens.size(0), p.length() + n);
  std::vector<at::Generator> gens = rm::make_generators(go, 0, int64_t(prompts.size()));
  rm::DecodeRows rows(p, go, dev);
  at::Tensor h;
  const auto sample = [&] {  // record() reads back whether every row stopped: the step ends on the host
    const rm::Choice c = rm::sample_next(m, h.narrow(1, h.size(1) - 1, 1), go, gens);
    rows.record(c.tokens, c.logprobs);
  };
  double t0 = now();
  h = m.forward_cached(p.tokens.to(dev), p.positions.to(dev), p.valid.to(dev), cache);
  sample();
  t.prefill_s = now() - t0;
  {
    const std::unique_ptr<rm::DecodeGraph> graph = graphed ? rm::DecodeGraph::make(m, cache) : nullptr;
    std::vector<double> steps;
    while (!rows.finished()) {
      t0 = now();
      const rm::DecodeRows::Step in = rows.next_step();
      if (graph) {
        h = graph->step(in.tokens, in.positions, in.valid);
      } else {
        if (fixed_shapes) cache.write_slots = at::full({1}, cache.length, in.positions.options());
        h = m.forward_cached(in.tokens, in.positions, in.valid, cache);
        cache.write_slots = at::Tensor();
      }
      sample();
      steps.push_back(now() - t0);
    }
    REALIGN_CHECK(steps.size() >= 3) << "--new must be at least 4";
    t.first_steps_s = steps[0] + steps[1];
    for (size_t i = 2; i < steps.size(); ++i) t.step_s += steps[i] / double(steps.size() - 2);
  }
  t.result = rows.result();
  return t;
}

// Bytes per second a device-to-device copy moves, counting bytes read and written (as HBM bandwidth is
// quoted for a decode step's reads, each read byte is one byte of traffic: the bound below uses this figure).
double copy_bandwidth(at::Device dev, int64_t bytes) {
  at::Tensor a = at::ones({bytes / 4}, at::TensorOptions().dtype(at::kFloat).device(dev)),
             b = at::empty_like(a);
  b.copy_(a);
  sync(b);
  int reps = 0;
  const double t0 = now();
  while (now() - t0 < 0.5 || reps < 3) {
    b.copy_(a);
    ++reps;
    if (reps % 8 == 0) sync(b);
  }
  sync(b);
  return 2.0 * double(bytes) * reps / (now() - t0);
}

std::vector<int64_t> int_list(const std::string& v) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= v.size()) {
    const size_t comma = v.find(',', pos);
    out.push_back(std::stoll(v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

double gemm_peak(at::Device dev, at::ScalarType dt, int64_t n) {
  auto o = at::TensorOptions().dtype(dt).device(dev);
  at::Tensor a = at::randn({n, n}, o), b = at::randn({n, n}, o), c;
  c = at::matmul(a, b);
  sync(c);
  int reps = 0;
  const double t0 = now();
  double t = 0;
  while (t < 1.0 || reps < 3) {
    c = at::matmul(a, b);
    ++reps;
    if (reps % 4 == 0 || t > 0) sync(c);
    t = now() - t0;
  }
  sync(c);
  t = now() - t0;
  return 2.0 * double(n) * n * n * reps / t / 1e9;
}

#if REALIGN_TORCH_HAS_LEGACY_PROFILER
// Where the step's time goes: its GEMMs replayed alone (their share of the step and their rate against the
// square-GEMM peak), and the profile's largest other ops (self time; the profiler adds time per op, so read
// their shares of the profiled time, not their seconds).
void print_profile(const bench::OpProfile& p, double steps, double step_s, double flops, double peak) {
  const double gemm_s = bench::replay_seconds(p.gemms) / steps;
  std::printf(
      "the step's %zu GEMMs alone: %.3f s = %.0f%% of the step, at %.1f GFLOP/s = %.0f%% of GEMM peak\n",
      size_t(double(p.gemms.size()) / steps), gemm_s, 100.0 * gemm_s / step_s, flops / gemm_s / 1e9,
      100.0 * flops / gemm_s / 1e9 / peak);
  double total = 0;
  std::vector<std::pair<double, std::string>> others;
  for (const auto& [name, t] : p.ops) {
    total += t.self_s;
    if (!bench::is_gemm(name)) others.emplace_back(t.self_s, name);
  }
  std::sort(others.rbegin(), others.rend());
  std::printf("largest other ops (share of the profiled time, %.3f s per step):\n", total / steps);
  for (size_t i = 0; i < others.size() && i < 8; ++i)
    std::printf("  %-40s %4.1f%%  (%ld calls)\n", others[i].second.c_str(), 100.0 * others[i].first / total,
                p.ops.at(others[i].second).calls / long(steps));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu", dtype = "fp32", preset, json_file;
  int64_t batch = 2, seq = 256, steps = 3, prompt = 32, new_tokens = 64, layers = 12, hidden = 768,
          head_dim = 64;
  std::vector<int64_t> dbatches{8};
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  std::string profile = "0", optimizer = "0";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--device") device = v;
    else if (k == "--dtype") dtype = v;
    else if (k == "--batch") batch = std::stoll(v);
    else if (k == "--seq") seq = std::stoll(v);
    else if (k == "--steps") steps = std::stoll(v);
    else if (k == "--decode-batch")
      dbatches = int_list(v);
    else if (k == "--prompt") prompt = std::stoll(v);
    else if (k == "--new") new_tokens = std::stoll(v);
    else if (k == "--layers") layers = std::stoll(v);
    else if (k == "--hidden") hidden = std::stoll(v);
    else if (k == "--head-dim")
      head_dim = std::stoll(v);
    else if (k == "--preset")
      preset = v;
    else if (k == "--optimizer")
      optimizer = v;
    else if (k == "--threads") threads = std::stoi(v);
    else if (k == "--json")
      json_file = v;
    else if (k == "--profile")
      profile = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  if (device != "cpu" && device != "cuda") return std::fprintf(stderr, "--device: cpu or cuda\n"), 2;
  if (dtype != "fp32" && dtype != "bf16") return std::fprintf(stderr, "--dtype: fp32 or bf16\n"), 2;
  if (profile != "0" && profile != "1") return std::fprintf(stderr, "--profile: 0 or 1\n"), 2;
  if (optimizer != "0" && optimizer != "1") return std::fprintf(stderr, "--optimizer: 0 or 1\n"), 2;
  if (!REALIGN_TORCH_HAS_LEGACY_PROFILER && profile == "1")
    return std::fprintf(stderr, "--profile 1: needs torch's legacy profiler (libtorch 1.x), not %s\n",
                        realign::torch_compat::kVersion),
           2;
  if (device == "cuda" && realign::torch_compat::cuda_device_count() == 0)
    return std::fprintf(stderr, "--device cuda: no CUDA device here (libtorch %s)\n",
                        realign::torch_compat::kVersion),
           2;
  // ~1.5B parameters in LLaMA's proportions (TinyLlama's width, 28 layers): 1.57B with a 32k vocabulary.
  if (preset == "1.5b")
    layers = 28, hidden = 2048, head_dim = 128;
  else if (!preset.empty())
    return std::fprintf(stderr, "--preset: 1.5b\n"), 2;
  if (head_dim <= 0 || hidden % head_dim != 0)
    return std::fprintf(stderr, "--head-dim must divide --hidden\n"), 2;
  at::set_num_threads(threads);
  const at::Device dev = device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  const at::ScalarType dt = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  const double elem_bytes = dtype == "bf16" ? 2.0 : 4.0;

  realign::ModelSpec spec = realign::builtin_model("llama-small");
  spec.name = "llama-bench";
  spec.n_layers = layers;
  spec.hidden = hidden;
  spec.n_heads = hidden / head_dim;
  spec.n_kv_heads = spec.n_heads;
  spec.head_dim = head_dim;
  spec.intermediate = preset == "1.5b" ? 5632 : (hidden * 8 / 3 + 127) / 128 * 128;
  spec.vocab = 32000;
  spec.max_positions = std::max<int64_t>(4096, seq);
  const std::string machine = device == "cuda" ? "cuda device 0" : realign::cpu_model_name();
  std::printf("bench_model: device %s (%s), dtype %s, threads %d, torch %s\n", device.c_str(),
              machine.c_str(), dtype.c_str(), at::get_num_threads(), TORCH_VERSION);
  std::printf("model: LLaMA %lld layers, hidden %lld, intermediate %lld, heads %lld, vocab %lld: %.1fM params\n",
              (long long)spec.n_layers, (long long)spec.hidden, (long long)spec.intermediate, (long long)spec.n_heads,
              (long long)spec.vocab, spec.total_params() / 1e6);
  realign::Json out = {{"device", device},        {"machine", machine},
                       {"dtype", dtype},          {"threads", at::get_num_threads()},
                       {"torch", TORCH_VERSION},  {"params", spec.total_params()},
                       {"layers", spec.n_layers}, {"hidden", spec.hidden},
                       {"head_dim", head_dim},    {"intermediate", spec.intermediate}};

  const double peak = gemm_peak(dev, dt, device == "cuda" ? 8192 : 2048);
  std::printf("GEMM peak (%s, square matmul): %.1f GFLOP/s\n", dtype.c_str(), peak);
  const double bandwidth = copy_bandwidth(dev, int64_t(1) << (device == "cuda" ? 30 : 27));
  std::printf("copy bandwidth (bytes read + written): %.1f GB/s\n", bandwidth / 1e9);
  out["gemm_peak_flops"] = peak * 1e9;
  out["copy_bandwidth"] = bandwidth;

  rm::Transformer m(spec, realign::HeadKind::kLanguageModel, {}, dt, dev);
  {
    rm::InitOptions o;
    m.load_shards(rm::init_rank_params(spec, realign::HeadKind::kLanguageModel, 1, 0, 1, 0, 1, o));
  }
  std::unique_ptr<realign::runtime::AdamW> adam;
  if (optimizer == "1") {
    realign::runtime::OptimConfig oc;
    oc.fp32_master = dt != at::kFloat;
    adam = std::make_unique<realign::runtime::AdamW>(m.named_params(), oc, steps + 1);
  }
  // Train step: forward, log-probs of the next tokens, backward (and the optimizer with --optimizer 1).
  std::vector<std::vector<int64_t>> seqs;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int64_t> s;
    for (int64_t t = 0; t < seq; ++t) s.push_back((b * 7919 + t * 104729) % spec.vocab);
    seqs.push_back(s);
  }
  rm::BuiltBatch bb = rm::pad_batch(seqs);
  rm::Targets tg = rm::next_token_targets(bb.batch);
  auto step = [&] {
    at::Tensor logp = m.token_logprobs(m.forward(bb.batch), tg.targets);
    at::Tensor loss = -(logp * tg.mask.to(dev)).sum() / double(batch * seq);
    loss.backward();
    if (adam) {
      adam->step();
      adam->zero_grad();
    } else {
      for (auto& p : m.parameters()) p.mutable_grad() = at::Tensor();
    }
    sync(loss);
  };
  step();  // warm-up
  const double t0 = now();
  for (int64_t i = 0; i < steps; ++i) step();
  const double dt_step = (now() - t0) / double(steps);
  const double tokens = double(batch * seq);
  const double flops = 3.0 * spec.forward_flops(tokens, double(seq) / 2.0);
  std::printf("train step (B=%lld, T=%lld%s): %.3f s, %.0f tokens/s, %.1f GFLOP/s = %.0f%% of GEMM peak\n",
              (long long)batch, (long long)seq, adam ? ", with AdamW" : "", dt_step, tokens / dt_step,
              flops / dt_step / 1e9, 100.0 * flops / dt_step / 1e9 / peak);
  out["train"] = {{"batch", batch},
                  {"seq", seq},
                  {"optimizer", bool(adam)},
                  {"step_s", dt_step},
                  {"tokens_per_s", tokens / dt_step},
                  {"flops_per_step", flops},
                  {"achieved_flops", flops / dt_step},
                  {"mfu_of_measured_gemm_peak", flops / dt_step / 1e9 / peak}};

#if REALIGN_TORCH_HAS_LEGACY_PROFILER
  if (profile == "1")
    print_profile(bench::profile_ops([&] {
                    for (int64_t i = 0; i < steps; ++i) step();
                  }),
                  double(steps), dt_step, flops, peak);
#endif
  adam.reset();

  // Decode: batched greedy generation with the KV cache (prefill timed separately), at each batch size.
  const std::string no_graph = rm::DecodeGraph::unavailable_because(m);
  std::printf("decode steps: %s\n", no_graph.empty() ? "replayed CUDA graphs" : ("launched, no CUDA graph: " + no_graph).c_str());
  out["decode_cuda_graph"] = no_graph.empty();
  if (!no_graph.empty()) out["decode_no_graph_because"] = no_graph;
  const auto prompts_of = [&](int64_t dbatch) {
    std::vector<std::vector<int64_t>> prompts(dbatch, std::vector<int64_t>(prompt, 1));
    for (int64_t b = 0; b < dbatch; ++b)
      for (int64_t t = 0; t < prompt; ++t) prompts[b][t] = (b * 31 + t * 17) % spec.vocab;
    return prompts;
  };
  // The graph's tokens against the same steps launched eagerly with the same fixed shapes (the same kernels,
  // so the same tokens), and against the growing shapes (other attention kernels: how far the log-probs move).
  {
    const auto prompts = prompts_of(dbatches.front());
    const rm::GenerateResult graphed = time_decode(m, prompts, new_tokens, true, false).result,
                             fixed = time_decode(m, prompts, new_tokens, false, true).result,
                             growing = time_decode(m, prompts, new_tokens, false, false).result;
    const auto max_diff = [](const rm::GenerateResult& a, const rm::GenerateResult& b) {
      return (a.logprobs - b.logprobs).abs().max().item<double>();
    };
    out["decode_check"] = {{"batch", dbatches.front()},
                           {"new_tokens", new_tokens},
                           {"through_graph", no_graph.empty()},
                           {"tokens_equal_fixed_shapes", at::equal(graphed.tokens, fixed.tokens)},
                           {"max_logprob_diff_fixed_shapes", max_diff(graphed, fixed)},
                           {"tokens_equal_growing_shapes", at::equal(graphed.tokens, growing.tokens)},
                           {"max_logprob_diff_growing_shapes", max_diff(graphed, growing)}};
    std::printf("decode check (B=%lld, %lld tokens): %s tokens %s the fixed shapes' launched eagerly (log-probs "
                "within %.2e), %s the growing shapes' (within %.2e)\n",
                (long long)dbatches.front(), (long long)new_tokens, no_graph.empty() ? "the graph's" : "eager",
                at::equal(graphed.tokens, fixed.tokens) ? "equal" : "DIFFER from", max_diff(graphed, fixed),
                at::equal(graphed.tokens, growing.tokens) ? "equal" : "differ from", max_diff(graphed, growing));
  }
  out["decode"] = realign::Json::array();
  for (const int64_t dbatch : dbatches) {
    const std::vector<std::vector<int64_t>> prompts = prompts_of(dbatch);
    const DecodeTiming t = time_decode(m, prompts, new_tokens, /*graphed=*/true, /*fixed_shapes=*/false);
    rm::GenerateOptions go;
    go.max_new_tokens = new_tokens;
    double t0 = now();
    sync(rm::generate(m, prompts, go).logprobs);
    const double call_s = now() - t0;
    const double step_s = t.step_s, tokens_per_s = double(dbatch) / step_s, prefill = t.prefill_s;
    // The bandwidth bound of a step at the mean context of the steady steps: every weight and every cached
    // key and value read once.
    const double context = double(prompt) + double(new_tokens) / 2.0;
    const double bytes =
        double(spec.total_params()) * elem_bytes +
        double(dbatch) * context * double(spec.n_layers) * spec.kv_cache_elements_per_rank(1) * elem_bytes;
    const double bound_tokens_per_s = double(dbatch) / (bytes / bandwidth);
    std::printf(
        "decode (B=%lld, prompt %lld, %lld new tokens, greedy): prefill %.3f s, steps 1-2 %.3f s%s, then %.1f "
        "tokens/s (%.2f ms per step) = %.0f%% of the bandwidth bound (%.0f tokens/s); generate() end to end "
        "%.3f s\n",
        (long long)dbatch, (long long)prompt, (long long)new_tokens, prefill, t.first_steps_s,
        no_graph.empty() ? " (the graph's warm-up and recording)" : "", tokens_per_s,
        1000.0 * step_s, 100.0 * tokens_per_s / bound_tokens_per_s, bound_tokens_per_s, call_s);
    out["decode"].push_back({{"batch", dbatch},
                             {"prompt", prompt},
                             {"new_tokens", new_tokens},
                             {"prefill_s", prefill},
                             {"first_steps_s", t.first_steps_s},
                             {"generate_call_s", call_s},
                             {"step_s", step_s},
                             {"tokens_per_s", tokens_per_s},
                             {"bytes_per_step", bytes},
                             {"bandwidth_bound_tokens_per_s", bound_tokens_per_s},
                             {"share_of_bound", tokens_per_s / bound_tokens_per_s}});
  }
  if (!json_file.empty()) {
    std::FILE* f = std::fopen(json_file.c_str(), "w");
    if (!f) return std::fprintf(stderr, "--json: cannot write %s\n", json_file.c_str()), 1;
    std::fprintf(f, "%s\n", out.dump(2).c_str());
    std::fclose(f);
  }
  return 0;
}
