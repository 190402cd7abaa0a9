// pipeline_test_worker's generation check (see pipeline_generate_check.h).
#include "pipeline_generate_check.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

#include "model/generate.h"
#include "model/init.h"
#include "model/transformer.h"
#include "runtime/pipeline.h"

namespace realign {
namespace {

// Nine prompts of lengths 1..9 in a scrambled order (every micro-batch pads differently).
std::vector<std::vector<int64_t>> prompts(int64_t vocab) {
  std::vector<std::vector<int64_t>> out;
  for (int i = 0; i < 9; ++i) {
    std::vector<int64_t> p;
    for (int t = 0; t < 1 + (i * 4) % 9; ++t) p.push_back((t * 37 + i * 11 + 5) % vocab);
    out.push_back(p);
  }
  return out;
}

// Stop tokens that end some rows early: tokens the reference generates at different steps of different
// rows. Throws when the reference without them gives too few distinct tokens to pick from.
std::vector<int64_t> stop_tokens_from(const model::GenerateResult& r) {
  std::set<int64_t> picked;
  for (int64_t b = 0; b < r.tokens.size(0) && picked.size() < 2; ++b) {
    const int64_t t = r.tokens[b][(2 + 3 * b) % r.tokens.size(1)].item<int64_t>();
    picked.insert(t);
  }
  return {picked.begin(), picked.end()};
}

void check(const model::GenerateResult& got, const model::GenerateResult& want, int64_t begin,
           const std::string& what) {
  const int64_t rows = got.tokens.size(0);
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t n = want.lengths[begin + b].item<int64_t>();
    const std::string row = what + " row " + std::to_string(begin + b);
    if (got.lengths[b].item<int64_t>() != n)
      throw std::runtime_error(row + ": length " + std::to_string(got.lengths[b].item<int64_t>()) +
                               ", pp = 1 " + std::to_string(n));
    if (!at::equal(got.tokens[b].narrow(0, 0, n), want.tokens[begin + b].narrow(0, 0, n)))
      throw std::runtime_error(row + ": tokens differ from pp = 1");
    const double diff = (got.logprobs[b].narrow(0, 0, n) - want.logprobs[begin + b].narrow(0, 0, n))
                            .abs()
                            .max()
                            .item<double>();
    if (!(diff <= 1e-5)) throw std::runtime_error(row + ": log-probs differ by " + std::to_string(diff));
  }
}

}  // namespace

void check_pipelined_generation(comm::World& world, const GenerationScenario& sc) {
  at::set_num_threads(1);
  const auto groups = world.axis_groups(sc.layout);
  if (!groups) return;
  const int stage = groups->coord.pp, tp_rank = groups->coord.tp, dp_rank = groups->coord.dp;
  model::InitOptions init;
  init.random_norms_and_biases = true;
  const uint64_t seed = 5;
  model::Transformer full(sc.spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
  full.load_shards(model::init_full_params(sc.spec, HeadKind::kLanguageModel, seed, init));
  model::Transformer mine(sc.spec, HeadKind::kLanguageModel, {groups->tp, stage, sc.layout.pp}, at::kFloat,
                          at::kCPU);
  mine.load_shards(model::init_rank_params(sc.spec, HeadKind::kLanguageModel, seed, tp_rank, sc.layout.tp,
                                           stage, sc.layout.pp, init));

  const auto all = prompts(sc.spec.vocab);
  const int64_t B = int64_t(all.size()), per = (B + sc.layout.dp - 1) / sc.layout.dp;
  const int64_t begin = std::min(B, dp_rank * per), end = std::min(B, begin + per);
  model::GenerateOptions greedy;
  greedy.max_new_tokens = 7;
  greedy.pad_id = 1;
  model::GenerateOptions sampled = greedy;
  sampled.greedy = false;
  sampled.temperature = 0.8;
  sampled.top_p = 0.95;
  for (int64_t i = 0; i < B; ++i) sampled.row_seeds.push_back(1000 + 7 * uint64_t(i));

  int checked = 0;
  for (model::GenerateOptions* o : {&greedy, &sampled}) {
    const std::string mode = o->greedy ? "greedy" : "sampled";
    // A row samples the same tokens with or without stop tokens, so these end rows at different steps.
    o->stop_tokens = stop_tokens_from(model::generate(full, all, *o));
    const model::GenerateResult want = model::generate(full, all, *o);
    std::set<int64_t> lengths;
    for (int64_t b = 0; b < B; ++b) lengths.insert(want.lengths[b].item<int64_t>());
    if (lengths.size() < 2 || *lengths.begin() == o->max_new_tokens)
      throw std::runtime_error(mode + ": the reference's rows do not stop at different lengths");
    model::GenerateOptions local = *o;
    if (!o->row_seeds.empty())
      local.row_seeds.assign(o->row_seeds.begin() + begin, o->row_seeds.begin() + end);
    const std::vector<std::vector<int64_t>> mine_prompts(all.begin() + begin, all.begin() + end);
    for (int64_t rows : sc.rows_per_micro) {
      const model::GenerateResult got =
          runtime::pipeline_generate(*groups->pp, mine, mine_prompts, local, rows);
      check(got, want, begin, mode + ", " + std::to_string(rows) + " rows per micro-batch");
      ++checked;
    }
  }
  std::printf("rank %d (dp %d, stage %d, tp %d) %s %s: %d generations equal pp = 1\n", world.rank(), dp_rank,
              stage, tp_rank, sc.spec.name.c_str(), to_string(sc.layout).c_str(), checked);
}

}  // namespace realign
