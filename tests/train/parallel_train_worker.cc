// The multi-process half of parallel_train_test.cc: SFT of a tiny model for N steps in one (dp, tp, pp, ep)
// layout, each rank building its CallContext from World::axis_groups and its shard from init_rank_params, the
// same global batch every step split over dp by balanced_part. Every rank writes its per-step "loss
// grad_norm" to <out>.<rank> (the test compares the curves across layouts and ranks), then the sum of the
// trained model's log-probs over the global batch's response tokens to <out>.<rank>.logprobs.
//   parallel_train_worker MODEL N_LAYERS LAYOUT STEPS OUT [tied] [zero1] [dpo] [rows=N] [micro=N]
//                         [die=STEP:RANK:kill|throw]
// rows: the global batch's rows (8); micro: the forward passes a rank's rows are cut into (the default's);
// dpo: DPO steps (a pair loss: chosen = the batch, rejected = other responses to the same prompts, the
// reference's log-probs 0) instead of SFT, "loss grad_norm" the same way.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/world.h"
#include "graph/model_spec.h"
#include "graph/param_layout.h"
#include "model/init.h"
#include "train/inference_calls.h"
#include "train/train_calls.h"

namespace realign {
namespace {

struct Args {
  ModelSpec spec;
  Layout layout;
  int steps = 0;
  std::string out;
  bool zero1 = false, dpo = false;
  int64_t rows = 8, micro_batches = 0;
  int die_step = -1, die_rank = -1;
  std::string die_how;
};

// `rows` rows: prompts of 2..8 tokens, responses of 4 tokens each (the update is a mean over the global
// batch's tokens however the rows are split).
runtime::SequenceBatch global_part(int64_t vocab, int64_t rows, int part, int parts, int64_t salt = 0) {
  std::vector<runtime::TokenIds> prompts, responses;
  const Range r = balanced_part(rows, part, parts);
  for (int64_t i = r.begin; i < r.end; ++i) {
    runtime::TokenIds p, q;
    for (int64_t t = 0; t < 2 + (i * 3) % 7; ++t) p.push_back((t * 13 + i * 7 + 1) % vocab);
    for (int64_t t = 0; t < 4; ++t) q.push_back((t * 5 + i * 11 + 3 + salt) % vocab);
    prompts.push_back(p), responses.push_back(q);
  }
  return runtime::make_sequence_batch(prompts, responses);
}

void run(comm::World& world, const Args& a) {
  at::set_num_threads(1);
  const auto groups = world.axis_groups(a.layout);
  if (!groups) return;
  const int stage = groups->coord.pp, tp_rank = groups->coord.tp;
  runtime::CallContext ctx;
  ctx.name = "sft";
  ctx.dp = groups->dp, ctx.tp = groups->tp, ctx.pp = groups->pp;
  ctx.ep = groups->ep, ctx.edp = groups->edp;
  ctx.micro_batches = a.micro_batches;

  auto model = std::make_unique<model::Transformer>(
      a.spec, HeadKind::kLanguageModel, model::ParallelContext{groups->tp, stage, a.layout.pp, groups->ep},
      at::kFloat, at::kCPU);
  model::InitOptions init;
  init.random_norms_and_biases = true;
  model->load_shards(model::init_rank_params(a.spec, HeadKind::kLanguageModel, 5, tp_rank, a.layout.tp, stage,
                                             a.layout.pp, init, groups->ep ? groups->ep->rank() : 0,
                                             a.layout.ep));
  runtime::OptimConfig oc;
  oc.lr = 3e-3;
  oc.warmup_steps = 2;
  oc.weight_decay = 0.1;
  oc.grad_clip = 1.0;  // the norm starts above it, so clipping is exercised
  oc.zero1 = a.zero1;
  runtime::TrainedModel tm = runtime::make_trained_model(std::move(model), oc, a.steps);

  const runtime::SequenceBatch batch = global_part(a.spec.vocab, a.rows, groups->coord.dp, a.layout.dp);
  const runtime::SequenceBatch rejected =
      global_part(a.spec.vocab, a.rows, groups->coord.dp, a.layout.dp, /*salt=*/17);
  FILE* out = std::fopen((a.out + "." + std::to_string(world.rank())).c_str(), "w");
  if (!out) throw std::runtime_error("cannot write " + a.out);
  for (int step = 0; step < a.steps; ++step) {
    if (step == a.die_step && world.rank() == a.die_rank) {
      std::fclose(out);
      if (a.die_how == "kill") std::raise(SIGKILL);
      throw std::runtime_error("injected failure at step " + std::to_string(step));
    }
    if (a.dpo) {
      const at::Tensor none = at::zeros({batch.size()});
      const train::PairStats s = train::dpo_train_call(ctx, tm, batch, rejected, none, none, 0.5, 0.0);
      std::fprintf(out, "%.10g %.10g\n", s.loss, s.grad_norm);
      continue;
    }
    const train::SftStats s = train::sft_train_call(ctx, tm, batch);
    std::fprintf(out, "%.10g %.10g\n", s.loss, s.grad_norm);
  }
  const at::Tensor per_token = train::logprobs_call(ctx, *tm.model, batch);
  at::Tensor logprobs =
      at::where(batch.response_mask > 0, per_token, at::zeros_like(per_token)).sum().to(at::kDouble);
  ctx.dp->all_reduce_sum(logprobs);
  FILE* lp = std::fopen((a.out + "." + std::to_string(world.rank()) + ".logprobs").c_str(), "w");
  if (!lp) throw std::runtime_error("cannot write " + a.out);
  std::fprintf(lp, "%.10g\n", logprobs.item<double>());
  std::fclose(lp);
  // A ZeRO-1 state gathers into the full state (what a checkpoint saves).
  runtime::gather_optimizer_state(ctx, tm);
  if (tm.optim->state_tensors().size() != 2 * tm.model->named_params().size())
    throw std::runtime_error("optimizer state incomplete after gather_optimizer_state");
  std::fclose(out);
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  return realign::comm::run_worker([&](realign::comm::World& world) {
    if (argc < 6)
      throw std::runtime_error(
          "usage: parallel_train_worker MODEL N_LAYERS LAYOUT STEPS OUT [tied] [zero1] [dpo] [rows=N] "
          "[micro=N] "
          "[die=STEP:RANK:kill|throw]");
    realign::Args a;
    a.spec = realign::builtin_model(argv[1]);
    a.spec.n_layers = std::stoi(argv[2]);
    a.layout = realign::parse_layout(argv[3], "layout");
    a.steps = std::stoi(argv[4]);
    a.out = argv[5];
    for (int i = 6; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "tied") {
        a.spec.tied_embeddings = true;
      } else if (flag == "zero1") {
        a.zero1 = true;
      } else if (flag == "dpo") {
        a.dpo = true;
      } else if (flag.rfind("rows=", 0) == 0) {
        a.rows = std::stoll(flag.substr(5));
      } else if (flag.rfind("micro=", 0) == 0) {
        a.micro_batches = std::stoll(flag.substr(6));
      } else if (flag.rfind("die=", 0) == 0) {
        const size_t c1 = flag.find(':'), c2 = flag.find(':', c1 + 1);
        if (c1 == std::string::npos || c2 == std::string::npos) throw std::runtime_error("bad " + flag);
        a.die_step = std::stoi(flag.substr(4, c1 - 4));
        a.die_rank = std::stoi(flag.substr(c1 + 1, c2 - c1 - 1));
        a.die_how = flag.substr(c2 + 1);
      } else {
        throw std::runtime_error("unknown flag " + flag);
      }
    }
    realign::run(world, a);
  });
}
