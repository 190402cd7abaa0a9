// bench_model: forward+backward tokens/s and achieved GFLOP/s of a ~100M-parameter LLaMA against this
// machine's measured GEMM peak, and batched KV-cache decode tokens/s.
// usage: bench_model [--device cpu|cuda] [--dtype fp32|bf16] [--batch B] [--seq T] [--steps N]
//                    [--decode-batch B] [--prompt P] [--new N] [--layers L] [--hidden H] [--threads N]
//                    [--profile 1]
// --profile 1: also where the train step's time goes, op by op (self time under torch's profiler): the GEMMs'
// share and rate, and the largest other ops.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "model/generate.h"
#include "model/init.h"
#include "model/transformer.h"
#include "op_profile.h"

namespace rm = realign::model;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Waits for queued device work (a host read of a reduction forces it on every backend).
void sync(const at::Tensor& t) { (void)t.sum().item<double>(); }

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

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu", dtype = "fp32";
  int64_t batch = 2, seq = 256, steps = 3, dbatch = 8, prompt = 32, new_tokens = 64, layers = 12, hidden = 768;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  std::string profile = "0";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--device") device = v;
    else if (k == "--dtype") dtype = v;
    else if (k == "--batch") batch = std::stoll(v);
    else if (k == "--seq") seq = std::stoll(v);
    else if (k == "--steps") steps = std::stoll(v);
    else if (k == "--decode-batch") dbatch = std::stoll(v);
    else if (k == "--prompt") prompt = std::stoll(v);
    else if (k == "--new") new_tokens = std::stoll(v);
    else if (k == "--layers") layers = std::stoll(v);
    else if (k == "--hidden") hidden = std::stoll(v);
    else if (k == "--threads") threads = std::stoi(v);
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
  at::set_num_threads(threads);
  const at::Device dev = device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  const at::ScalarType dt = dtype == "bf16" ? at::kBFloat16 : at::kFloat;

  realign::ModelSpec spec = realign::builtin_model("llama-small");
  spec.name = "llama-bench";
  spec.n_layers = layers;
  spec.hidden = hidden;
  spec.n_heads = hidden / 64;
  spec.n_kv_heads = spec.n_heads;
  spec.head_dim = 64;
  spec.intermediate = (hidden * 8 / 3 + 127) / 128 * 128;
  spec.vocab = 32000;
  spec.max_positions = 4096;
  std::printf("bench_model: device %s, dtype %s, threads %d, torch %s\n", device.c_str(), dtype.c_str(),
              at::get_num_threads(), TORCH_VERSION);
  std::printf("model: LLaMA %lld layers, hidden %lld, intermediate %lld, heads %lld, vocab %lld: %.1fM params\n",
              (long long)spec.n_layers, (long long)spec.hidden, (long long)spec.intermediate, (long long)spec.n_heads,
              (long long)spec.vocab, spec.total_params() / 1e6);

  const double peak = gemm_peak(dev, dt, device == "cuda" ? 8192 : 2048);
  std::printf("GEMM peak (%s, square matmul): %.1f GFLOP/s\n", dtype.c_str(), peak);

  rm::Transformer m(spec, realign::HeadKind::kLanguageModel, {}, dt, dev);
  {
    rm::InitOptions o;
    m.load_shards(rm::init_rank_params(spec, realign::HeadKind::kLanguageModel, 1, 0, 1, 0, 1, o));
  }
  // Train step: forward, log-probs of the next tokens, backward (no optimizer).
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
    for (auto& p : m.parameters()) p.mutable_grad() = at::Tensor();
    sync(loss);
  };
  step();  // warm-up
  const double t0 = now();
  for (int64_t i = 0; i < steps; ++i) step();
  const double dt_step = (now() - t0) / double(steps);
  const double tokens = double(batch * seq);
  const double flops = 3.0 * spec.forward_flops(tokens, double(seq) / 2.0);
  std::printf("train step (B=%lld, T=%lld): %.3f s, %.0f tokens/s, %.1f GFLOP/s = %.0f%% of GEMM peak\n",
              (long long)batch, (long long)seq, dt_step, tokens / dt_step, flops / dt_step / 1e9,
              100.0 * flops / dt_step / 1e9 / peak);

  if (profile == "1")
    print_profile(bench::profile_ops([&] {
                    for (int64_t i = 0; i < steps; ++i) step();
                  }),
                  double(steps), dt_step, flops, peak);

  // Decode: batched greedy generation with the KV cache (prefill timed separately).
  std::vector<std::vector<int64_t>> prompts(dbatch, std::vector<int64_t>(prompt, 1));
  for (int64_t b = 0; b < dbatch; ++b)
    for (int64_t t = 0; t < prompt; ++t) prompts[b][t] = (b * 31 + t * 17) % spec.vocab;
  rm::GenerateOptions go;
  go.max_new_tokens = 1;
  rm::generate(m, prompts, go);  // warm-up
  double tp0 = now();
  rm::generate(m, prompts, go);
  const double prefill = now() - tp0;
  go.max_new_tokens = new_tokens;
  tp0 = now();
  rm::GenerateResult r = rm::generate(m, prompts, go);
  sync(r.logprobs);
  const double total = now() - tp0;
  const double decode = std::max(1e-9, total - prefill);
  std::printf("decode (B=%lld, prompt %lld, %lld new tokens, greedy): prefill %.3f s, %.1f tokens/s "
              "(%.1f ms per step)\n",
              (long long)dbatch, (long long)prompt, (long long)new_tokens, prefill,
              double(dbatch * (new_tokens - 1)) / decode, 1000.0 * decode / double(new_tokens - 1));
  return 0;
}
