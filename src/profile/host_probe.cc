#include "profile/host_probe.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "graph/model_spec.h"
#include "model/init.h"
#include "model/transformer.h"

namespace realign::profile {
namespace {

// Restores the process's torch thread count however the probe ends.
class OneThread {
 public:
  OneThread() : saved_(at::get_num_threads()) { at::set_num_threads(1); }
  ~OneThread() { at::set_num_threads(saved_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int saved_;
};

}  // namespace

double measure_host_probe_s() {
  OneThread one_thread;
  // A process's heap state moves the probe: where freed memory goes back to the kernel and is faulted in
  // again every step, a fresh process takes 7.9 ms a probe on a 2-core AMD EPYC; after a 16 MiB block is
  // freed (glibc then keeps blocks up to that size in its heap, as in a process that has run other work)
  // 6.2-6.7 ms. Every caller frees one first, so that the probe times the work, not the process's history.
  at::empty({int64_t(4) << 20}, at::kFloat).fill_(0);
  const ModelSpec spec = builtin_model("llama-tiny");
  model::Transformer m(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
  m.load_shards(model::init_full_params(spec, HeadKind::kLanguageModel, 1));
  // The main example's micro-batch: 64 prompts of 4 tokens and their 3-token answers, padded to 8.
  const int64_t rows = 64, tokens = 8;
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  model::TokenBatch b;
  b.tokens = at::arange(rows * tokens, i64).remainder(spec.vocab).reshape({rows, tokens});
  b.positions = at::arange(tokens, i64).unsqueeze(0).expand({rows, tokens}).contiguous();
  b.segments = at::ones({rows, tokens}, i64.dtype(at::kInt));
  const at::Tensor targets = b.tokens.roll(-1, 1);
  const auto step = [&] {
    const at::Tensor loss = -m.token_logprobs(m.forward(b), targets).mean();
    loss.backward();
    for (at::Tensor& p : m.parameters()) p.mutable_grad() = at::Tensor();
  };
  // A process's first steps run slower (the allocator's pools, the core's clock) for longer than a few
  // steps: warm up for a tenth of a second. Then the lower quartile of 0.3 s of steps: another process
  // taking the core now and then only ever adds time, and the median of a shorter window moved by 4%
  // between runs on a 2-core AMD EPYC.
  using Clock = std::chrono::steady_clock;
  const auto warm_until = Clock::now() + std::chrono::milliseconds(100);
  while (Clock::now() < warm_until) step();
  std::vector<double> samples;
  const auto measure_until = Clock::now() + std::chrono::milliseconds(300);
  while (Clock::now() < measure_until || samples.size() < 8) {
    const auto t0 = Clock::now();
    step();
    samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 4), samples.end());
  return samples[samples.size() / 4];
}

double host_probe_s_for(const Cluster& cluster) {
  return is_cpu_device(cluster.device) ? measure_host_probe_s() : 0.0;
}

}  // namespace realign::profile
