// bench/pipeline: pipelined inference, 1F1B training and pipelined greedy generation (prompts of the first 8
// tokens of each row, --gen new tokens) over pp local processes (one thread each) against the same
// micro-batches run one after another by one process holding the whole model, with the ideal pipeline
// speed-up M * S / (M + S - 1) beside the measured one.
//   bench_pipeline [--pp S] [--micro M] [--layers L] [--hidden H] [--batch B] [--seq T] [--gen N] [--reps R]
// Starts S copies of itself (comm/launcher.h); rank 0 prints the table.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "comm/launcher.h"
#include "comm/world.h"
#include "model/generate.h"
#include "model/init.h"
#include "model/transformer.h"
#include "runtime/pipeline.h"

namespace realign {
namespace {

struct Settings {
  int pp = 2, micro = 8, reps = 2;
  int64_t layers = 8, hidden = 256, batch = 4, seq = 128, gen = 32;
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ModelSpec bench_model(const Settings& s) {
  ModelSpec m = builtin_model("llama-tiny");
  m.name = "llama-bench";
  m.n_layers = s.layers;
  m.hidden = s.hidden;
  m.n_heads = s.hidden / 64;
  m.n_kv_heads = m.n_heads;
  m.head_dim = 64;
  m.intermediate = s.hidden * 8 / 3;
  m.vocab = 8192;
  return m;
}

std::vector<model::TokenBatch> batches(const Settings& s, int64_t vocab) {
  std::vector<model::TokenBatch> out;
  for (int m = 0; m < s.micro; ++m) {
    model::TokenBatch b;
    b.tokens = (at::arange(s.batch * s.seq, at::kLong).reshape({s.batch, s.seq}) * 37 + m) % vocab;
    b.positions = at::arange(s.seq, at::kLong).repeat({s.batch, 1});
    b.segments = at::ones({s.batch, s.seq}, at::kInt);
    out.push_back(b);
  }
  return out;
}

// Best of `reps` wall times of `f` (after one warm-up run), agreed over `g` (the slowest rank counts).
template <class F>
double best_time(comm::Group& g, int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) {
    g.barrier();
    const double t0 = now();
    f();
    at::Tensor t = at::tensor({now() - t0}, at::kDouble);
    g.all_reduce(t, comm::ReduceOp::kMax);
    if (r > 0) best = std::min(best, t.item<double>());
  }
  return best;
}

void run(comm::World& world, const Settings& s) {
  at::set_num_threads(1);
  const ModelSpec spec = bench_model(s);
  const auto micro = batches(s, spec.vocab);
  auto nll = [&](model::Transformer& m, const at::Tensor& h, int i) {
    return -m.token_logprobs(h, at::roll(micro[size_t(i)].tokens, -1, 1)).mean() / double(s.micro);
  };
  comm::Group& g = *world.global();
  std::vector<std::vector<int64_t>> prompts;
  for (const model::TokenBatch& b : micro)
    for (int64_t r = 0; r < s.batch; ++r) {
      const at::Tensor row = b.tokens[r].narrow(0, 0, std::min<int64_t>(8, s.seq)).contiguous();
      prompts.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
    }
  model::GenerateOptions greedy;
  greedy.max_new_tokens = s.gen;
  // One process, whole model (the others wait at the barrier).
  double seq_fwd = 0, seq_train = 0, seq_gen = 0;
  {
    model::Transformer full(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
    if (world.rank() == 0) full.load_shards(model::init_full_params(spec, HeadKind::kLanguageModel, 1));
    seq_fwd = best_time(g, s.reps, [&] {
      if (world.rank() != 0) return;
      c10::NoGradGuard ng;
      for (int i = 0; i < s.micro; ++i) nll(full, full.forward(micro[size_t(i)]), i);
    });
    seq_train = best_time(g, s.reps, [&] {
      if (world.rank() != 0) return;
      for (int i = 0; i < s.micro; ++i) nll(full, full.forward(micro[size_t(i)]), i).backward();
    });
    seq_gen = best_time(g, s.reps, [&] {
      if (world.rank() != 0) return;
      for (int i = 0; i < s.micro; ++i)
        model::generate(full, {prompts.begin() + i * s.batch, prompts.begin() + (i + 1) * s.batch}, greedy);
    });
  }
  Layout layout;
  layout.pp = s.pp;
  const auto groups = world.axis_groups(layout);
  const int stage = groups->coord.pp;
  model::Transformer m(spec, HeadKind::kLanguageModel, {groups->tp, stage, s.pp}, at::kFloat, at::kCPU);
  m.load_shards(model::init_rank_params(spec, HeadKind::kLanguageModel, 1, 0, 1, stage, s.pp));
  const auto head = [&](const at::Tensor& h, int i) { return nll(m, h, i); };
  const double pipe_fwd =
      best_time(g, s.reps, [&] { runtime::pipeline_forward(*groups->pp, m, micro, head); });
  const double pipe_train =
      best_time(g, s.reps, [&] { runtime::pipeline_train_1f1b(*groups->pp, m, micro, head); });
  const double pipe_gen =
      best_time(g, s.reps, [&] { runtime::pipeline_generate(*groups->pp, m, prompts, greedy, s.batch); });
  if (world.rank() != 0) return;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const double ideal = double(s.micro) * s.pp / double(s.micro + s.pp - 1);
  std::printf("machine: %s, %ld cores; 1 thread per process, fp32, Gloo\n", host,
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("model: llama %lld layers, hidden %lld; %d micro-batches of %lld x %lld tokens; pp %d\n",
              (long long)s.layers, (long long)s.hidden, s.micro, (long long)s.batch, (long long)s.seq, s.pp);
  std::printf("%-10s %12s %12s %10s %10s\n", "pass", "1 process s", "pipeline s", "speed-up", "ideal");
  std::printf("%-10s %12.3f %12.3f %10.2f %10.2f\n", "forward", seq_fwd, pipe_fwd, seq_fwd / pipe_fwd, ideal);
  std::printf("%-10s %12.3f %12.3f %10.2f %10.2f\n", "1f1b", seq_train, pipe_train, seq_train / pipe_train,
              ideal);
  std::printf("%-10s %12.3f %12.3f %10.2f %10.2f   (%lld new tokens)\n", "generate", seq_gen, pipe_gen,
              seq_gen / pipe_gen, ideal, (long long)s.gen);
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  realign::Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (k == "--pp")
      s.pp = int(v);
    else if (k == "--micro")
      s.micro = int(v);
    else if (k == "--layers")
      s.layers = v;
    else if (k == "--hidden")
      s.hidden = v;
    else if (k == "--batch")
      s.batch = v;
    else if (k == "--seq")
      s.seq = v;
    else if (k == "--gen")
      s.gen = v;
    else if (k == "--reps")
      s.reps = int(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (std::getenv("RANK") == nullptr) {
    realign::comm::LaunchOptions o;
    o.nprocs = s.pp;
    o.argv.push_back(realign::comm::current_executable());
    for (int i = 1; i < argc; ++i) o.argv.push_back(argv[i]);
    const auto r = realign::comm::launch_local(o);
    if (r.exit_code != 0) std::fprintf(stderr, "%s\n", r.failure.c_str());
    return r.exit_code;
  }
  return realign::comm::run_worker([&](realign::comm::World& world) { realign::run(world, s); });
}
