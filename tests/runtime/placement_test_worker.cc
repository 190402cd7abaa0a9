// The multi-process half of placement_test.cc: a model initialised in its home layout is moved to each call
// layout with ShardMover; the ranks of the call layout build a Transformer from the moved shards and compute
// per-token log-probs, which must equal those of the unsharded model (fp32 round-off) on every rank.
//   placement_test_worker <home layout> <call layout> [<call layout> ...]
#include <ATen/ATen.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "model/init.h"
#include "model/transformer.h"
#include "runtime/shard_mover.h"

namespace realign {
namespace {

model::TokenBatch test_batch(int64_t vocab) {
  const int64_t B = 3, T = 12;
  model::TokenBatch b;
  b.tokens = (at::arange(B * T, at::kLong).reshape({B, T}) * 37 + 11) % vocab;
  b.positions = at::arange(T, at::kLong).repeat({B, 1});
  b.segments = at::ones({B, T}, at::kInt);
  return b;
}

at::Tensor logprobs_of(model::Transformer& m, const model::TokenBatch& b) {
  const at::Tensor targets = at::roll(b.tokens, -1, 1);
  at::NoGradGuard no_grad;
  return m.token_logprobs(m.forward(b), targets);
}

void run(comm::World& world, const Layout& home, const std::vector<Layout>& calls) {
  const ModelSpec spec = builtin_model("llama-small");
  const auto infos = model_params(spec, HeadKind::kLanguageModel);
  const uint64_t seed = 5;
  model::InitOptions init;
  init.random_norms_and_biases = true;
  ShardMap held;
  if (home.contains(world.rank())) {
    const auto c = home.coord_of(world.rank());
    held = model::init_rank_params(spec, HeadKind::kLanguageModel, seed, c.tp, home.tp, c.pp, home.pp, init);
  }
  const model::TokenBatch batch = test_batch(spec.vocab);
  model::Transformer full(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
  full.load_shards(model::init_full_params(spec, HeadKind::kLanguageModel, seed, init));
  const at::Tensor expected = logprobs_of(full, batch);

  runtime::ShardMover mover(infos, spec.n_layers, at::kFloat);
  for (const Layout& call : calls) {
    ReallocStats stats;
    const ShardMap moved = mover.move(*world.global(), held, home, call, &stats);
    const auto groups = world.axis_groups(call);
    if (!groups) continue;
    if (call.pp != 1) throw std::runtime_error("this test runs single-stage call layouts only");
    model::Transformer m(spec, HeadKind::kLanguageModel, {groups->tp, 0, 1}, at::kFloat, at::kCPU);
    m.load_shards(moved);
    const at::Tensor got = logprobs_of(m, batch);
    const double diff = (got - expected).abs().max().item<double>();
    std::printf("rank %d: %s -> %s: max |logprob diff| %.3g, %lld bytes received\n", world.rank(),
                to_string(home).c_str(), to_string(call).c_str(), diff, (long long)stats.bytes_received);
    if (!(diff < 1e-4))
      throw std::runtime_error(to_string(home) + " -> " + to_string(call) + ": log-probs differ by " +
                               std::to_string(diff));
  }
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (argc < 3) throw std::runtime_error("usage: placement_test_worker HOME CALL [CALL ...]");
    std::vector<realign::Layout> calls;
    for (int i = 2; i < argc; ++i) calls.push_back(realign::parse_layout(argv[i], "call"));
    realign::run(world, realign::parse_layout(argv[1], "home"), calls);
  });
}
