// The multi-process half of placement_test.cc: a model initialised in its home layout is moved to each call
// layout with ShardMover; the ranks of the call layout build a Transformer from the moved shards and compute
// per-token log-probs, which must equal those of the unsharded model (fp32 round-off) on every rank.
//   placement_test_worker <home layout> <call layout> [<call layout> ...]
//   placement_test_worker rows <from layout> <to layout> [<to layout> ...]
//       rows of variable length produced under `from` arrive, padded, on the ranks of each `to` layout.
//   placement_test_worker direct
//       CallPlacement::move_rows takes rows from their producers' ranks straight to the consumer's: it moves
//       exactly the samples the consumer's ranks lack (none when they hold them all), in one message per pair
//       of ranks for several producers, where a pass through the dp-over-every-rank layout moves more.
#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "model/init.h"
#include "model/transformer.h"
#include "runtime/call_placement.h"
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
  c10::NoGradGuard no_grad;
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
    const std::string what =
        to_string(from) + " -> " + to_string(to) + " rank " + std::to_string(world.rank());
    if (need.size() == 0) {
      if (!got.empty()) throw std::runtime_error(what + ": rows where none are needed");
      continue;
    }
    const at::Tensor& tokens = got.at("tokens");
    if (tokens.size(0) != need.size()) throw std::runtime_error(what + ": wrong row count");
    for (int64_t r = 0; r < need.size(); ++r) {
      const at::Tensor expect = sample_tokens(need.begin + r);
      const at::Tensor row = tokens[r];
      if (!row.narrow(0, 0, expect.size(0)).equal(expect) ||
          row.narrow(0, expect.size(0), row.size(0) - expect.size(0)).ne(0).any().item<bool>())
        throw std::runtime_error(what + ": row " + std::to_string(r) + " differs");
      if (got.at("reward")[r].item<float>() != float(need.begin + r) / 4)
        throw std::runtime_error(what + ": reward of row " + std::to_string(r) + " differs");
    }
  }
}

int64_t world_sum(comm::World& world, int64_t x) {
  at::Tensor t = at::tensor({x}, at::kLong);
  world.global()->all_reduce_sum(t);
  return t.item<int64_t>();
}

runtime::Rows rows_held(int64_t n, const Layout& layout, int rank) {
  runtime::Rows mine;
  const Range have = samples_of(n, layout, rank);
  if (have.size() == 0) return mine;
  std::vector<at::Tensor> tokens;
  for (int64_t i = have.begin; i < have.end; ++i) tokens.push_back(sample_tokens(i));
  mine["tokens"] = runtime::stack_padded(tokens);
  return mine;
}

// The rows `got` are this rank's of `to` (its shares of `segments`), tokens as sample_tokens.
void check_rows(const runtime::Rows& got, int64_t n, const Layout& to, int64_t segments, int rank,
                const std::string& what) {
  int64_t r = 0;
  for (const Range& share : segment_shares(n, to, rank, segments))
    for (int64_t i = share.begin; i < share.end; ++i, ++r) {
      const at::Tensor expect = sample_tokens(i);
      if (!got.count("tokens") || got.at("tokens").size(0) <= r ||
          !got.at("tokens")[r].narrow(0, 0, expect.size(0)).equal(expect))
        throw std::runtime_error(what + ": rank " + std::to_string(rank) + " row " + std::to_string(r) +
                                 " is not sample " + std::to_string(i));
    }
  if (r == 0 && !got.empty()) throw std::runtime_error(what + ": rows where none are needed");
}

// Bytes the world receives moving `mine` from `from` to `to` through the batch layout of before (dp over
// every rank): producer -> batch layout -> consumer.
int64_t two_hop_bytes(comm::World& world, int64_t n, const Layout& from, const Layout& to, int64_t segments,
                      const runtime::Rows& mine) {
  const Layout batch{0, world.size(), 1, 1};
  DataMoveStats stats;
  const runtime::Rows on_batch = runtime::exchange_rows(*world.global(), n, from, batch, mine, &stats);
  runtime::exchange_rows(*world.global(), n, batch, to, on_batch, &stats, segments);
  return world_sum(world, stats.bytes_received);
}

void run_direct(comm::World& world) {
  const int64_t n = 11;
  const int rank = world.rank();
  runtime::CallPlacement place(
      world.global(), [&](const Layout& l) { return world.axis_groups(l); }, runtime::CallLayouts{});
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(what);
  };

  // Generation tensor-parallel on devices 2-3, its consumer on device 3 alone: device 3 holds every row, so
  // nothing moves; through the batch layout the rows would leave for devices 0-2 and come back.
  const Layout gen = parse_layout("d1t2p1@2", "gen"), inf = parse_layout("d1t1p1@3", "inf");
  const runtime::Rows gen_rows = rows_held(n, gen, rank);
  place.begin_step();
  const runtime::Rows got = place.move_rows({{"inf", gen, inf, n, gen_rows, 1}})[0];
  check_rows(got, n, inf, 1, rank, "gen -> inf");
  const int64_t direct = world_sum(world, place.data_bytes());
  const int64_t via_batch = two_hop_bytes(world, n, gen, inf, 1, gen_rows);
  need(direct == 0,
       "gen -> inf moved " + std::to_string(direct) + " bytes where the consumer holds every row");
  need(via_batch > 0, "the pass through the batch layout moved nothing");
  need(place.events().empty(), "a data event where no row changed place");

  // A train call on devices 0-1 (dp 2, two mini-batches) reads from the generation (2-3) and from an
  // inference on every device (dp 4): both producers in one exchange, one message per pair of ranks and
  // round, exactly the samples the consumer's ranks lack.
  const Layout train = parse_layout("d2t1p1", "train"), all = parse_layout("d4t1p1", "all");
  const runtime::Rows inf_rows = rows_held(n, all, rank);
  DataMoveStats stats;
  std::vector<DataMoveStats> per_move;
  const std::vector<runtime::Rows> both = runtime::exchange_rows(
      *world.global(), {{n, gen, train, &gen_rows, 2}, {n, all, train, &inf_rows, 2}}, &stats, &per_move);
  check_rows(both[0], n, train, 2, rank, "gen -> train");
  check_rows(both[1], n, train, 2, rank, "all -> train");
  const DataPlan from_gen = plan_data_redistribution(n, gen, train, 2);
  const DataPlan from_all = plan_data_redistribution(n, all, train, 2);
  need(world_sum(world, per_move[0].samples_received) == from_gen.samples_minimum &&
           world_sum(world, per_move[1].samples_received) == from_all.samples_minimum,
       "samples received differ from the samples the consumer lacks");
  std::set<std::pair<int, int>> pairs;
  for (const DataPlan* p : {&from_gen, &from_all})
    for (const SampleTransfer& t : p->transfers) pairs.insert({t.src, t.dst});
  // Each message is counted by its sender and its receiver; a size header and a body per pair.
  const int64_t messages = world_sum(world, stats.messages);
  need(messages == int64_t(4 * pairs.size()), std::to_string(messages) + " messages counted for " +
                                                  std::to_string(pairs.size()) + " pairs of ranks");
  const int64_t merged = world_sum(world, stats.bytes_received);
  const int64_t via_batch_both =
      two_hop_bytes(world, n, gen, train, 2, gen_rows) + two_hop_bytes(world, n, all, train, 2, inf_rows);
  need(merged < via_batch_both, "direct " + std::to_string(merged) + " bytes, through the batch layout " +
                                    std::to_string(via_batch_both));
  if (rank == 0)
    std::printf(
        "direct: gen -> inf %lld bytes (via the batch layout %lld); two producers -> train %lld bytes "
        "in %lld messages (via the batch layout %lld)\n",
        (long long)direct, (long long)via_batch, (long long)merged, (long long)messages,
        (long long)via_batch_both);
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (argc < 2) throw std::runtime_error("usage: placement_test_worker HOME CALL [CALL ...]");
    if (std::string(argv[1]) == "direct") {
      realign::run_direct(world);
      return;
    }
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
