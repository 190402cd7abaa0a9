// The multi-process half of placement_test.cc: a model initialised in its home layout is moved to each call
// layout with ShardMover; the ranks of the call layout build a Transformer from the moved shards and compute
// per-token log-probs, which must equal those of the unsharded model (fp32 round-off) on every rank.
//   placement_test_worker <home layout> <call layout> [<call layout> ...]
//   placement_test_worker rows <from layout> <to layout> [<to layout> ...]
//       rows of variable length produced under `from` arrive, padded, on the ranks of each `to` layout.
#include <ATen/ATen.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "model/init.h"
#include "model/transformer.h"
#include "runtime/row_exchange.h"
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

// Sample i: tokens i*100 + [0, 1 + i % 5), reward i / 4.
at::Tensor sample_tokens(int64_t i) { return at::arange(1 + i % 5, at::kLong) + i * 100; }

void run_rows(comm::World& world, const Layout& from, const std::vector<Layout>& tos) {
  const int64_t n = 11;
  runtime::Rows mine;
  const Range have = samples_of(n, from, world.rank());
  if (have.size() > 0) {
    std::vector<at::Tensor> tokens;
    for (int64_t i = have.begin; i < have.end; ++i) tokens.push_back(sample_tokens(i));
    mine["tokens"] = runtime::stack_padded(tokens);
    mine["reward"] = at::arange(have.begin, have.end, at::kFloat) / 4;
  }
  for (const Layout& to : tos) {
    const runtime::Rows got = runtime::exchange_rows(*world.global(), n, from, to, mine);
    const Range need = samples_of(n, to, world.rank());
    const std::string what = to_string(from) + " -> " + to_string(to) + " rank " + std::to_string(world.rank());
    if (need.size() == 0) {
      if (!got.empty()) throw std::runtime_error(what + ": rows where none are needed");
      continue;
    }
    const at::Tensor& tokens = got.at("tokens");
    if (tokens.size(0) != need.size()) throw std::runtime_error(what + ": wrong row count");
    for (int64_t r = 0; r < need.size(); ++r) {
      const at::Tensor expect = sample_tokens(need.begin + r);
      const at::Tensor row = tokens[r];
      if (!row.narrow(0, 0, expect.size(0)).equal(expect) || row.narrow(0, expect.size(0),
          row.size(0) - expect.size(0)).ne(0).any().item<bool>())
        throw std::runtime_error(what + ": row " + std::to_string(r) + " differs");
      if (got.at("reward")[r].item<float>() != float(need.begin + r) / 4)
        throw std::runtime_error(what + ": reward of row " + std::to_string(r) + " differs");
    }
  }
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (argc < 3) throw std::runtime_error("usage: placement_test_worker HOME CALL [CALL ...]");
    if (std::string(argv[1]) == "rows") {
      std::vector<realign::Layout> tos;
      for (int i = 3; i < argc; ++i) tos.push_back(realign::parse_layout(argv[i], "to"));
      realign::run_rows(world, realign::parse_layout(argv[2], "from"), tos);
      return;
    }
    std::vector<realign::Layout> calls;
    for (int i = 2; i < argc; ++i) calls.push_back(realign::parse_layout(argv[i], "call"));
    realign::run(world, realign::parse_layout(argv[1], "home"), calls);
  });
}
