// Worker for the expert-parallel generation tests: `model_ep_generate_worker <dp> <tp> <ep>`, started dp * tp
// times by launch_local, one pipeline stage. The ep groups are those of the layout (comm::expert_ranks), so
// with ep > tp they span data-parallel ranks that hold different prompts: dp rank 0 gets one prompt that
// stops at its first token, the others longer ones, so ranks finish at different steps and the finished ones
// keep stepping with their ep group (model/generate.h). Each rank checks that its rows' tokens equal the
// whole model's generation of the same prompts on one rank (greedy, then sampled with per-row seeds).
#include <ATen/ATen.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "model/generate.h"
#include "model/init.h"
#include "test_util.h"

namespace rm = realign::model;
using realign::HeadKind;
using realign::ModelSpec;

namespace {

rm::InitOptions init_options() {
  rm::InitOptions o;
  o.std = 0.1;
  o.random_norms_and_biases = true;
  return o;
}

void run(realign::comm::World& world, int dp, int tp, int ep) {
  const realign::Layout layout{0, dp, tp, 1, ep};
  const auto groups = world.axis_groups(layout);
  if (!groups) throw std::runtime_error("rank outside the layout");
  const int dp_rank = groups->coord.dp, tp_rank = groups->coord.tp;
  const int ep_rank = groups->ep ? groups->ep->rank() : 0;
  for (const ModelSpec& spec : {rm::testing::qwen3_moe_tiny(), rm::testing::qwen2_moe_tiny()}) {
    const std::string name = spec.name + " d" + std::to_string(dp) + "t" + std::to_string(tp) + "e" +
                             std::to_string(ep) + " rank " + std::to_string(world.rank());
    rm::Transformer full(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
    full.load_shards(rm::init_full_params(spec, HeadKind::kLanguageModel, 3, init_options()));
    rm::Transformer part(spec, HeadKind::kLanguageModel, rm::ParallelContext{groups->tp, 0, 1, groups->ep},
                         at::kFloat, at::kCPU);
    part.load_shards(rm::init_rank_params(spec, HeadKind::kLanguageModel, 3, tp_rank, tp, 0, 1,
                                          init_options(), ep_rank, ep));

    rm::GenerateOptions o;
    o.max_new_tokens = 8;
    // dp rank 0's one prompt stops at its first token: every rank learns that token from the whole model.
    const auto first_prompt = rm::testing::random_sequences(spec.vocab, {5}, 40);
    o.stop_tokens = {rm::generate(full, first_prompt, o).tokens[0][0].item<int64_t>()};
    const auto prompts =
        dp_rank == 0 ? first_prompt
                     : rm::testing::random_sequences(spec.vocab, {3 + dp_rank, 7, 2 * dp_rank}, 40 + dp_rank);
    rm::GenerateResult got = rm::generate(part, prompts, o), want = rm::generate(full, prompts, o);
    if (dp_rank == 0 && got.lengths[0].item<int64_t>() != 1)
      throw std::runtime_error(name + ": dp rank 0's row did not stop at its first token");
    if (dp_rank > 0 && got.tokens.size(1) < 2)
      throw std::runtime_error(name + ": every rank stopped at the first token; the test needs later ones");
    if (!at::equal(got.tokens, want.tokens) || !at::equal(got.lengths, want.lengths))
      throw std::runtime_error(name + ": greedy tokens differ from the whole model's");
    const std::string diff = rm::testing::compare(got.logprobs, want.logprobs, 2e-5, 2e-5);
    if (!diff.empty()) throw std::runtime_error(name + " log-probs: " + diff);
    o.greedy = false;
    o.row_seeds.clear();
    for (size_t i = 0; i < prompts.size(); ++i) o.row_seeds.push_back(100 * uint64_t(dp_rank) + i);
    if (!at::equal(rm::generate(part, prompts, o).tokens, rm::generate(full, prompts, o).tokens))
      throw std::runtime_error(name + ": sampled tokens differ from the whole model's");
    std::printf("rank %d: %s ok (%lld steps)\n", world.rank(), name.c_str(),
                static_cast<long long>(got.tokens.size(1)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: model_ep_generate_worker DP TP EP\n");
    return 2;
  }
  const int dp = std::stoi(argv[1]), tp = std::stoi(argv[2]), ep = std::stoi(argv[3]);
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (world.size() != dp * tp) throw std::runtime_error("world size must be dp * tp");
    run(world, dp, tp, ep);
  });
}
