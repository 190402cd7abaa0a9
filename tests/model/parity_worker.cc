// Worker for the tensor/pipeline/expert parity tests: `model_parity_worker <tp> <pp> [ep]`, started tp * pp
// times by launch_local. Ranks are laid out stage-major (ranks [s * tp, (s + 1) * tp) form stage s); with
// ep > 1 the mixture-of-experts models spread their experts over ep consecutive tp ranks (dp = 1). Every rank
// also builds the whole model on one rank (same seed) and checks against it: log-probs, entropy and logits of
// a padded and a packed batch, each parameter's gradient slice (the gathered gradient equals the full one),
// and greedy generation under tp; at ep = 2 also with routers that leave one ep rank's experts unused.
// Throws on the first mismatch (run_worker reports it).
#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "model/generate.h"
#include "model/init.h"
#include "model/shard.h"
#include "test_util.h"

namespace rm = realign::model;
using realign::HeadKind;
using realign::ModelSpec;

namespace {

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what, double tol = 2e-5) {
  const std::string diff = rm::testing::compare(got, want, tol, tol);
  if (!diff.empty()) throw std::runtime_error(what + ": " + diff);
}

// GQA with KV heads divisible by 4, and a vocabulary that splits unevenly over 2 and 4 ranks.
std::vector<ModelSpec> specs() {
  ModelSpec llama = rm::testing::llama_scaled_tiny();
  llama.n_heads = 8;
  llama.n_kv_heads = 4;
  llama.head_dim = 8;
  llama.vocab = 250;
  llama.n_layers = 3;
  ModelSpec gpt2 = realign::builtin_model("gpt2-tiny");
  gpt2.vocab = 257;
  std::vector<ModelSpec> out = {llama, gpt2};
  for (ModelSpec moe : {rm::testing::qwen2_moe_tiny(), rm::testing::qwen3_moe_tiny()}) {
    moe.n_heads = 8;
    moe.n_kv_heads = 4;
    moe.head_dim = 8;
    moe.vocab = 250;
    out.push_back(moe);
  }
  return out;
}

// Routers that send no token to the second half of the experts (the last ep rank's at ep = 2): rows 2j and
// 2j + 1 are +-(row j) for the first E/2 rows, the rest zero, so exactly k experts of the first half score
// above zero for every token (needs E/2 >= 2k). That rank then runs no expert, yet takes part in every
// all-to-all, forward and backward.
void starve_second_half(rm::Transformer& m) {
  c10::NoGradGuard no_grad;
  for (auto& [name, w] : m.named_params()) {
    if (name.find("moe.router.weight") == std::string::npos) continue;
    const int64_t E = w.size(0);
    const at::Tensor rows = w.narrow(0, 0, E / 4).clone();
    w.zero_();
    w.narrow(0, 0, E / 2).copy_(at::stack({rows, -rows}, 1).reshape({E / 2, w.size(1)}));
  }
}

rm::InitOptions init_options() {
  rm::InitOptions o;
  o.std = 0.1;
  o.random_norms_and_biases = true;
  return o;
}

void run(realign::comm::World& world, int tp, int pp, int ep) {
  const int rank = world.rank(), stage = rank / tp, tp_rank = rank % tp;
  std::vector<int> tp_ranks, pp_ranks;
  for (int r = 0; r < tp; ++r) tp_ranks.push_back(stage * tp + r);
  for (int s = 0; s < pp; ++s) pp_ranks.push_back(s * tp + tp_rank);
  auto tp_group = tp > 1 ? world.subgroup(tp_ranks) : realign::comm::single_rank_group();
  auto pp_group = pp > 1 ? world.subgroup(pp_ranks) : realign::comm::single_rank_group();
  const realign::Layout layout{0, 1, tp, pp, ep};
  auto ep_group = ep > 1 ? world.subgroup(realign::comm::expert_ranks(layout, rank)) : nullptr;
  const int ep_rank = ep_group ? ep_group->rank() : 0;
  // Ranks holding the same experts (tp / ep of them) each see their own tokens' share of the experts'
  // gradient: summed over them, as the runtime's gradient sync does.
  auto edp_group = ep > 1 ? world.subgroup(realign::comm::expert_data_ranks(layout, rank)) : nullptr;
  at::manual_seed(0);
  std::vector<std::pair<ModelSpec, bool>> cases;  // (spec, second half of the experts starved)
  for (const ModelSpec& spec : specs()) {
    if (ep > 1 && !spec.is_moe()) continue;
    cases.push_back({spec, false});
    if (ep == 2 && spec.moe.num_experts >= 4 * spec.moe.experts_per_token) cases.push_back({spec, true});
  }
  for (const auto& [spec, starved] : cases) {
    const std::string name = spec.name + (starved ? " (second half of the experts unused)" : "") + " tp" +
                             std::to_string(tp) + " pp" + std::to_string(pp) + " ep" + std::to_string(ep) +
                             " stage " + std::to_string(stage) + " tp rank " + std::to_string(tp_rank);
    rm::Transformer full(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
    full.load_shards(rm::init_full_params(spec, HeadKind::kLanguageModel, 3, init_options()));
    rm::Transformer part(spec, HeadKind::kLanguageModel, rm::ParallelContext{tp_group, stage, pp, ep_group},
                         at::kFloat, at::kCPU);
    part.load_shards(rm::init_rank_params(spec, HeadKind::kLanguageModel, 3, tp_rank, tp, stage, pp,
                                          init_options(), ep_rank, ep));
    if (starved) starve_second_half(full), starve_second_half(part);

    auto seqs = rm::testing::random_sequences(spec.vocab, {9, 4, 13, 6}, 17);
    for (bool packed : {false, true}) {
      const std::string what = name + (packed ? " packed" : " padded");
      rm::BuiltBatch b = packed ? rm::pack_batch(seqs, 16) : rm::pad_batch(seqs);
      rm::Targets t = rm::next_token_targets(b.batch);
      for (auto& p : full.parameters()) p.mutable_grad() = at::Tensor();
      for (auto& p : part.parameters()) p.mutable_grad() = at::Tensor();
      // Reference: the whole model on this rank.
      at::Tensor ref_ent;
      at::Tensor ref_h = full.forward(b.batch);
      at::Tensor ref_logp = full.token_logprobs(ref_h, t.targets, &ref_ent);
      at::Tensor ref_logits = full.logits(ref_h);
      ((ref_logp * t.mask).sum() + 0.1 * (ref_ent * t.mask).sum()).backward();

      // The sharded model: stages hand hidden states forward and their gradients back over pp.
      at::Tensor hidden_in;
      if (!part.first_stage()) {
        hidden_in = at::empty({b.batch.tokens.size(0), b.batch.tokens.size(1), spec.hidden});
        pp_group->recv(hidden_in, stage - 1);
        hidden_in.set_requires_grad(true);
      }
      at::Tensor h = part.forward_stage(b.batch, hidden_in);
      if (!part.last_stage()) {
        pp_group->send(h.detach().contiguous(), stage + 1);
        at::Tensor grad = at::empty_like(h);
        pp_group->recv(grad, stage + 1);
        h.backward(grad);
      } else {
        at::Tensor ent;
        at::Tensor logp = part.token_logprobs(h, t.targets, &ent);
        expect_close(logp * t.mask, ref_logp * t.mask, what + " log-probs");
        expect_close(ent, ref_ent, what + " entropy");
        expect_close(part.logits(h), ref_logits, what + " logits");
        ((logp * t.mask).sum() + 0.1 * (ent * t.mask).sum()).backward();
        if (!part.first_stage()) pp_group->send(hidden_in.grad().contiguous(), stage - 1);
      }
      // A tied embedding lives on the first and the last stage: its gradient is the sum of both copies.
      if (spec.tied_embeddings && pp > 1 && (part.first_stage() || part.last_stage())) {
        at::Tensor g = part.named_params().at("embed.weight").grad().contiguous();
        at::Tensor other = at::empty_like(g);
        if (part.first_stage()) {
          pp_group->recv(other, pp - 1);
          part.named_params().at("embed.weight").mutable_grad() = g + other;
        } else {
          pp_group->send(g, 0);
          part.named_params().at("embed.weight").mutable_grad() = at::Tensor();
        }
      }
      for (const realign::ParamInfo& p : part.param_infos()) {
        if (p.expert && edp_group) {
          at::Tensor& grad = part.named_params().at(p.name).mutable_grad();
          if (!grad.defined()) grad = at::zeros_like(part.named_params().at(p.name));  // no row reached them
          edp_group->all_reduce_sum(grad);
        }
        const at::Tensor& g = part.named_params().at(p.name).grad();
        if (!g.defined()) continue;  // the last stage's copy of a tied embedding (summed on the first)
        at::Tensor want = rm::shard_of(full.named_params().at(p.name).grad(), p, tp_rank, tp, ep_rank, ep);
        expect_close(g, want, what + " gradient of " + p.name, 1e-4);
      }
    }
    if (pp == 1) {
      rm::GenerateOptions o;
      o.max_new_tokens = 6;
      auto prompts = rm::testing::random_sequences(spec.vocab, {3, 7}, 4);
      rm::GenerateResult a = rm::generate(part, prompts, o), r = rm::generate(full, prompts, o);
      if (!at::equal(a.tokens, r.tokens)) throw std::runtime_error(name + ": generated tokens differ from tp=1");
      expect_close(a.logprobs, r.logprobs, name + " generated log-probs");
      o.greedy = false;
      o.seed = 9;
      if (!at::equal(rm::generate(part, prompts, o).tokens, rm::generate(full, prompts, o).tokens))
        throw std::runtime_error(name + ": sampled tokens differ from tp=1");
    }
    std::printf("rank %d: %s ok\n", rank, name.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: model_parity_worker TP PP [EP]\n");
    return 2;
  }
  const int tp = std::stoi(argv[1]), pp = std::stoi(argv[2]), ep = argc == 4 ? std::stoi(argv[3]) : 1;
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (world.size() != tp * pp) throw std::runtime_error("world size must be tp * pp");
    run(world, tp, pp, ep);
  });
}
