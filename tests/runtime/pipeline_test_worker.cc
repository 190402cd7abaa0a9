// The multi-process half of pipeline_test.cc. Every rank builds the unsharded model (the reference) and its
// own stage/tp shard of the same model, then checks on itself:
//  1. pipeline_forward's head outputs (log-probs and entropies, or values) equal the single-stage model's;
//  2. two 1F1B passes give the single-stage losses, and every parameter's accumulated .grad equals the
//     single-stage grad (sliced to this rank's shard) after sync_tied_embedding_grads; a tied embedding's two
//     copies hold bit-equal grads, and before the sync the first stage's differs (so the sync is needed).
//   pipeline_test_worker <builtin model> <n_layers> <layout> <micro-batches>[,<micro-batches>...] [tied]
//   [value]
// (one run of both checks per micro-batch count, on fresh models). With the flag `generate`, the list gives
// rows per micro-batch instead and the worker runs the generation check (pipeline_generate_check.h).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <c10/core/GradMode.h>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "graph/model_spec.h"
#include "model/init.h"
#include "model/shard.h"
#include "model/transformer.h"
#include "pipeline_generate_check.h"
#include "runtime/pipeline.h"

namespace realign {
namespace {

struct Scenario {
  ModelSpec spec;
  HeadKind head = HeadKind::kLanguageModel;
  Layout layout;
  int n_micro = 1;
};

// Micro-batches of different shapes: even ones padded (one sequence per row), odd ones packed.
std::vector<model::TokenBatch> micro_batches(int n, int64_t vocab) {
  std::vector<model::TokenBatch> out;
  for (int m = 0; m < n; ++m) {
    std::vector<std::vector<int64_t>> seqs;
    for (int s = 0; s < 3; ++s) {
      std::vector<int64_t> seq;
      for (int t = 0; t < 3 + (m * 5 + s * 3) % 7; ++t) seq.push_back((t * 31 + m * 17 + s * 7 + 3) % vocab);
      seqs.push_back(seq);
    }
    out.push_back(m % 2 == 0 ? model::pad_batch(seqs).batch : model::pack_batch(seqs, 12).batch);
  }
  return out;
}

// Inference head: (2, B, T) log-probs and entropies, or (B, T) values.
at::Tensor head_outputs(model::Transformer& m, const at::Tensor& hidden, const model::TokenBatch& b) {
  if (m.head() == HeadKind::kValue) return m.values(hidden);
  at::Tensor entropy;
  const at::Tensor lp = m.token_logprobs(hidden, model::next_token_targets(b).targets, &entropy);
  return at::stack({lp, entropy});
}

// Training loss of one micro-batch, scaled by 1 / n_micro: masked mean NLL, or masked MSE to a fixed target.
at::Tensor loss_of(model::Transformer& m, const at::Tensor& hidden, const model::TokenBatch& b, int n_micro) {
  const model::Targets t = model::next_token_targets(b);
  at::Tensor per_token;
  if (m.head() == HeadKind::kValue)
    per_token = (m.values(hidden) - at::sin(b.positions.to(at::kFloat))).pow(2);
  else
    per_token = -m.token_logprobs(hidden, t.targets);
  return (per_token * t.mask).sum() / t.mask.sum() / double(n_micro);
}

double max_abs(const at::Tensor& t) { return t.numel() == 0 ? 0.0 : t.abs().max().item<double>(); }

void expect_close(const at::Tensor& got, const at::Tensor& want, double rtol, const std::string& what) {
  if (!got.defined() || !got.sizes().equals(want.sizes()))
    throw std::runtime_error(what + ": missing or wrong shape");
  const double diff = max_abs(got.to(at::kDouble) - want.to(at::kDouble)), scale = max_abs(want);
  if (!(diff <= rtol * scale + 1e-7))
    throw std::runtime_error(what + ": max |diff| " + std::to_string(diff) + " vs max |want| " +
                             std::to_string(scale));
}

void run(comm::World& world, const Scenario& sc) {
  at::set_num_threads(1);
  const uint64_t seed = 11;
  model::InitOptions init;
  init.random_norms_and_biases = true;
  const auto groups = world.axis_groups(sc.layout);
  if (!groups) return;
  const int stage = groups->coord.pp, tp_rank = groups->coord.tp;
  comm::Group& pp = *groups->pp;
  const std::vector<model::TokenBatch> batches = micro_batches(sc.n_micro, sc.spec.vocab);

  model::Transformer full(sc.spec, sc.head, {}, at::kFloat, at::kCPU);
  full.load_shards(model::init_full_params(sc.spec, sc.head, seed, init));
  model::Transformer mine(sc.spec, sc.head, {groups->tp, stage, sc.layout.pp}, at::kFloat, at::kCPU);
  mine.load_shards(
      model::init_rank_params(sc.spec, sc.head, seed, tp_rank, sc.layout.tp, stage, sc.layout.pp, init));

  // 1. Pipelined inference.
  const std::vector<at::Tensor> outputs = runtime::pipeline_forward(
      pp, mine, batches,
      [&](const at::Tensor& h, int m) { return head_outputs(mine, h, batches[size_t(m)]); });
  if (int(outputs.size()) != sc.n_micro)
    throw std::runtime_error("pipeline_forward: wrong number of outputs");
  {
    c10::NoGradGuard no_grad;
    for (int m = 0; m < sc.n_micro; ++m) {
      const model::TokenBatch& b = batches[size_t(m)];
      expect_close(outputs[size_t(m)], head_outputs(full, full.forward(b), b), 1e-5,
                   "pipeline_forward micro-batch " + std::to_string(m));
    }
  }

  // 2. Two 1F1B passes accumulate grads as two single-stage passes do.
  std::vector<double> want_losses;
  for (int pass = 0; pass < 2; ++pass)
    for (int m = 0; m < sc.n_micro; ++m) {
      const model::TokenBatch& b = batches[size_t(m)];
      at::Tensor loss = loss_of(full, full.forward(b), b, sc.n_micro);
      loss.backward();
      if (pass == 0) want_losses.push_back(loss.item<double>());
    }
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<double> losses = runtime::pipeline_train_1f1b(
        pp, mine, batches,
        [&](const at::Tensor& h, int m) { return loss_of(mine, h, batches[size_t(m)], sc.n_micro); });
    for (int m = 0; m < sc.n_micro; ++m)
      if (!(std::abs(losses[size_t(m)] - want_losses[size_t(m)]) <= 1e-5 * std::abs(want_losses[size_t(m)])))
        throw std::runtime_error("1F1B pass " + std::to_string(pass) + " micro-batch " + std::to_string(m) +
                                 ": loss " + std::to_string(losses[size_t(m)]) + ", single-stage " +
                                 std::to_string(want_losses[size_t(m)]));
  }
  const bool tied_pair = sc.spec.tied_embeddings && sc.head == HeadKind::kLanguageModel && sc.layout.pp > 1 &&
                         (mine.first_stage() || mine.last_stage());
  auto want_grad = [&](const ParamInfo& p) {
    return model::shard_of(full.named_params().at(p.name).grad(), p, tp_rank, sc.layout.tp);
  };
  if (tied_pair) {
    // Each copy holds only its own use's gradient until the sync.
    const ParamInfo& e = mine.param_infos().front();
    if (e.name != "embed.weight") throw std::runtime_error("expected embed.weight first");
    const at::Tensor before = mine.named_params().at("embed.weight").grad();
    const double diff = max_abs(before - want_grad(e)), scale = max_abs(want_grad(e));
    if (!(diff > 1e-3 * scale))
      throw std::runtime_error("tied embed.weight grad already equals the full grad before the sync");
  }
  runtime::sync_tied_embedding_grads(pp, mine);
  int checked = 0;
  for (const ParamInfo& p : mine.param_infos()) {
    const at::Tensor want = want_grad(p);
    if (!(max_abs(want) > 0)) throw std::runtime_error(p.name + ": the reference grad is zero");
    expect_close(mine.named_params().at(p.name).grad(), want, 1e-4, "grad of " + p.name);
    ++checked;
  }
  if (tied_pair) {
    at::Tensor g = mine.named_params().at("embed.weight").grad().contiguous();
    if (mine.first_stage()) {
      pp.send(g, sc.layout.pp - 1);
    } else {
      at::Tensor other = at::empty_like(g);
      pp.recv(other, 0);
      if (!at::equal(other, g)) throw std::runtime_error("tied embed.weight grads differ between the copies");
    }
  }
  std::printf("rank %d (stage %d, tp %d) %s %s: %d micro-batches, outputs, losses and %d grads ok\n",
              world.rank(), stage, tp_rank, sc.spec.name.c_str(), to_string(sc.layout).c_str(), sc.n_micro,
              checked);
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (argc < 5)
      throw std::runtime_error(
          "usage: pipeline_test_worker MODEL N_LAYERS LAYOUT MICRO_BATCHES[,...] [tied] [value] [generate]");
    realign::Scenario sc;
    sc.spec = realign::builtin_model(argv[1]);
    sc.spec.n_layers = std::stoi(argv[2]);
    sc.layout = realign::parse_layout(argv[3], "layout");
    bool generate = false;
    for (int i = 5; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "generate")
        generate = true;
      else if (flag == "tied")
        sc.spec.tied_embeddings = true;
      else if (flag == "value")
        sc.head = realign::HeadKind::kValue;
      else
        throw std::runtime_error("unknown flag " + flag);
    }
    std::vector<int64_t> counts;
    for (size_t pos = 0; pos < std::string(argv[4]).size();) {
      const std::string list = argv[4];
      const size_t comma = std::min(list.find(',', pos), list.size());
      counts.push_back(std::stoll(list.substr(pos, comma - pos)));
      pos = comma + 1;
    }
    if (generate) return realign::check_pipelined_generation(world, {sc.spec, sc.layout, counts});
    for (int64_t n : counts) {
      sc.n_micro = int(n);
      realign::run(world, sc);
    }
  });
}
