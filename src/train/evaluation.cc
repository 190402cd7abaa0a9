// Held-out greedy accuracy of the actor on its home devices (not a call of the plan).
#include <ATen/ATen.h>

#include <algorithm>

#include "train/detail/trainer_impl.h"

namespace realign::train {

double Trainer::evaluate() {
  if (!trains(Role::kActor) || data_.eval_prompts.empty()) return -1;
  const int64_t n = int64_t(data_.eval_prompts.size());
  double sums[2] = {0, 0};
  // Evaluation is not a call of the plan: it generates on the actor's home devices, pipeline stages folded
  // into data parallelism (greedy decoding of a few prompts gains nothing from stage hand-offs); a mixture of
  // experts keeps its ep, so at pp = 1 that is the home layout itself.
  const Layout home = place_->home(Role::kActor);
  const Layout layout{home.first_device, home.dp * home.pp, home.tp, 1, home.ep};
  const auto body = [&](const runtime::CallContext& ctx, model::Transformer& m) {
    const Range r = samples_of(n, layout, rank());
    std::vector<data::PromptRecord> local(data_.eval_prompts.begin() + r.begin,
                                          data_.eval_prompts.begin() + r.end);
    std::vector<runtime::TokenIds> prompts;
    for (const auto& p : local) prompts.push_back(codec_.encode_prompt(p.prompt));
    SamplingOptions o;
    o.greedy = true;
    o.max_new_tokens = input_.algorithm.batch.cap();
    o.stop_tokens = codec_.stop_tokens();
    o.pad_id = codec_.pad_id();
    // A rank without prompts returns at once, or steps along with its ep group (generate_call).
    std::vector<runtime::TokenIds> responses = generate_call(ctx, m, prompts, o);
    std::vector<std::string> texts;
    for (const runtime::TokenIds& t : responses) texts.push_back(codec_.decode(t));
    // Tensor-parallel replicas generate the same rows: count each row once.
    if (ctx.tp->rank() != 0) return;
    for (double v : rule_rewards(RewardConfig{}, local, texts)) sums[0] += v;
    sums[1] += double(local.size());
  };
  place_->run_calls(
      {{"eval_gen", Role::kActor, layout, shape(Role::kActor), home_shards(Role::kActor), body}});
  at::Tensor t = at::tensor({sums[0], sums[1]}, at::kDouble);
  all_ranks_->all_reduce_sum(t);
  return t[0].item<double>() / std::max(1.0, t[1].item<double>());
}

}  // namespace realign::train
