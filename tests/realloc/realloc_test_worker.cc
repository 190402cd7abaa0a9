// The multi-process half of the realloc tests, started on N ranks by executor_test.cc (comm/launcher.h).
//   realloc_test_worker pairs <model> <n_pairs> <seed> <fp32|bf16>
//       n_pairs random layout pairs over the world (tp, pp, dp changing together, overlapping and disjoint
//       device sets), each executed and every destination shard checked bit-for-bit; bytes_moved must equal
//       bytes_minimum and the bytes received.
//   realloc_test_worker data <n_pairs> <seed>
//       random producer/consumer layouts, a batch of variable-length samples with several fields and dtypes.
// Throws (so the run fails, naming the pair) on any mismatch.
#include <ATen/ATen.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "core/error.h"
#include "realloc/data_executor.h"
#include "realloc/plan_test_util.h"
#include "realloc/realloc_check.h"

namespace realign {
namespace {

ModelSpec model_named(const std::string& name) {
  if (name == "moe-odd") return testing::moe_odd();
  return name == "gpt2-odd" ? testing::gpt2_odd() : builtin_model(name);
}

void run_pairs(comm::World& world, const std::string& model, int n_pairs, uint64_t seed,
               at::ScalarType dtype) {
  const ModelSpec spec = model_named(model);
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  auto group = world.global();
  Rng rng(seed);
  const SliceSource source = synthetic_params(seed);
  ReallocOptions options;
  options.chunk_bytes = 4096;  // small chunks: many messages per slice, exercising the chunking and window
  options.window_bytes = 32768;
  for (int k = 0; k < n_pairs; ++k) {
    Layout from = testing::random_layout(rng, world.size(), {1, 2, 3, 4}, 3);
    Layout to = testing::random_layout(rng, world.size(), {1, 2, 3, 4}, 3);
    if (spec.is_moe()) {
      from.ep = testing::random_ep(rng, spec, from);
      to.ep = testing::random_ep(rng, spec, to);
    }
    const CheckResult r = run_realloc_check(*group, params, spec.n_layers, from, to, source, dtype, options);
    const std::string what = model + " " + to_string(from) + " -> " + to_string(to);
    if (world.rank() == 0)
      std::printf("%s: %lld bytes moved, %lld shards checked, %.4f s\n", what.c_str(),
                  (long long)r.bytes_moved, (long long)r.shards_checked, r.seconds);
    if (!r.ok)
      throw std::runtime_error(what + ": " + std::to_string(r.mismatches) + " mismatching shards, moved " +
                               std::to_string(r.bytes_moved) + " minimum " + std::to_string(r.bytes_minimum) +
                               " received " + std::to_string(r.bytes_received));
  }
}

// Sample i's fields: variable-length tokens (int64), log-probs (fp32), a reward (bf16 scalar), values (fp32,
// possibly empty).
Sample make_sample(int64_t i, uint64_t seed) {
  const int64_t len = 1 + int64_t((uint64_t(i) * 2654435761u + seed) % 37);
  Sample s;
  s["tokens"] = at::arange(len, at::kLong) * 7 + i;
  s["logprobs"] = at::arange(len - 1, at::kFloat) * 0.5f - float(i);
  s["reward"] = at::full({}, double(i) * 0.25, at::kBFloat16);
  if (i % 3 != 0) s["values"] = at::full({len % 5}, float(i), at::kFloat);
  return s;
}

// Random producer/consumer pairs, moved one to three at a time in one exchange (the batches of several
// producers travel together): every consumer rank gets exactly its samples, and the samples received are the
// minimum, the ones the consumer ranks lack.
void run_data(comm::World& world, int n_pairs, uint64_t seed) {
  auto group = world.global();
  Rng rng(seed);
  for (int done = 0, round = 0; done < n_pairs; ++round) {
    const int together = 1 + round % 3;
    done += together;
    std::vector<DataPlan> plans;
    std::vector<SampleSet> held;
    std::vector<std::string> what;
    for (int j = 0; j < together; ++j) {
      const Layout producer = testing::random_layout(rng, world.size(), {1, 2, 3, 4}, 3);
      const Layout consumer = testing::random_layout(rng, world.size(), {1, 2, 3, 4}, 3);
      const int64_t n = rng.uniform_int(30);
      const int64_t segments = 1 + rng.uniform_int(3);
      what.push_back(std::to_string(n) + " samples " + to_string(producer) + " -> " + to_string(consumer) +
                     " in " + std::to_string(segments) + " segments");
      plans.push_back(plan_data_redistribution(n, producer, consumer, segments));
      held.emplace_back();
      const Range mine = samples_of(n, producer, world.rank());
      for (int64_t i = mine.begin; i < mine.end; ++i) held.back()[i] = make_sample(i + 1000 * j, seed);
    }
    std::vector<const SampleSet*> held_ptrs;
    for (const SampleSet& h : held) held_ptrs.push_back(&h);
    DataMoveStats stats;
    std::vector<DataMoveStats> per_plan;
    const std::vector<SampleSet> got = redistribute_samples(*group, plans, held_ptrs, &stats, &per_plan);
    for (int j = 0; j < together; ++j) {
      const DataPlan& plan = plans[size_t(j)];
      int64_t needed = 0;
      for (const Range& need :
           segment_shares(plan.n_samples, plan.consumer, world.rank(), plan.consumer_segments)) {
        needed += need.size();
        for (int64_t i = need.begin; i < need.end; ++i) {
          auto it = got[size_t(j)].find(i);
          if (it == got[size_t(j)].end())
            throw std::runtime_error(what[size_t(j)] + ": missing sample " + std::to_string(i));
          const Sample want = make_sample(i + 1000 * j, seed);
          if (it->second.size() != want.size())
            throw std::runtime_error(what[size_t(j)] + ": sample " + std::to_string(i) + " fields");
          for (const auto& [name, t] : want) {
            const at::Tensor& g = it->second.at(name);
            if (g.scalar_type() != t.scalar_type() || g.sizes() != t.sizes() || !at::equal(g, t))
              throw std::runtime_error(what[size_t(j)] + ": sample " + std::to_string(i) + " field " + name +
                                       " differs");
          }
        }
      }
      if (int64_t(got[size_t(j)].size()) != needed)
        throw std::runtime_error(what[size_t(j)] + ": rank " + std::to_string(world.rank()) + " got " +
                                 std::to_string(got[size_t(j)].size()) + " samples, expected " +
                                 std::to_string(needed));
      at::Tensor count = at::tensor({per_plan[size_t(j)].samples_received}, at::kLong);
      group->all_reduce_sum(count);
      if (count.item<int64_t>() != plan.samples_minimum)
        throw std::runtime_error(what[size_t(j)] + ": " + std::to_string(count.item<int64_t>()) +
                                 " samples received, minimum " + std::to_string(plan.samples_minimum));
    }
  }
  if (world.rank() == 0) std::printf("data: %d pairs ok\n", n_pairs);
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  using namespace realign;
  return comm::run_worker([&](comm::World& world) {
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "pairs" && argc == 6) {
      run_pairs(world, argv[2], std::stoi(argv[3]), std::stoull(argv[4]),
                std::string(argv[5]) == "bf16" ? at::kBFloat16 : at::kFloat);
    } else if (what == "data" && argc == 4) {
      run_data(world, std::stoi(argv[2]), std::stoull(argv[3]));
    } else {
      throw Error("argv",
                  "usage: realloc_test_worker pairs <model> <n> <seed> <fp32|bf16> | data <n> <seed>");
    }
  });
}
