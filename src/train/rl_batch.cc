// An RL step's batch computed on a train call's ranks, from the rows its producers sent there: scores
// (clipped, normalised), the per-token KL, GAE or the outcome advantages (GRPO's group statistics, ReMax's
// greedy baseline), whitening and the step's batch statistics. Every statistic over the whole batch is a
// collective over the call's dp group (in each dp group of a train call every row is held by one rank), so
// nothing depends on the layout: per-row values are exact, sums differ by fp32 round-off at most.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "algo/advantages.h"
#include "algo/gae.h"
#include "algo/ppo_loss.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

PpoBatch Trainer::rl_batch(const runtime::CallContext& ctx, const BatchRows& rows, const runtime::Rows& got,
                           const std::vector<int64_t>& index, double kl_coef, Json* stats) const {
  const PpoConfig& ppo = train_config_.ppo;
  const int64_t n = rows.n;
  comm::Group& dp = *ctx.dp;
  PpoBatch batch;
  batch.seqs =
      runtime::make_sequence_batch(prompts_of(rows, index), token_lists(got, "response"), codec_.pad_id());
  const at::Tensor& mask = batch.seqs.response_mask;
  const int64_t T = batch.seqs.batch.tokens.size(1);
  auto field = [&](const char* name) {
    auto it = got.find(name);
    return it == got.end() ? at::Tensor() : fit_columns(it->second, T);
  };
  batch.old_logprobs = field("old_logprobs");
  batch.ref_logprobs = field("ref_logprobs");
  const at::Tensor values = field("values");
  at::Tensor scores = got.at("score");
  const at::Tensor raw_scores = scores;

  const algo::KlEstimator est = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  // Without a reference model (models.ref: none) there is no KL term: the coefficient is 0 (train_config.h).
  const bool reference = batch.ref_logprobs.defined();
  const at::Tensor kl = reference ? algo::kl_per_token(batch.old_logprobs, batch.ref_logprobs, est) * mask
                                  : at::zeros_like(batch.old_logprobs);
  if (ppo.reward_clip > 0) scores = scores.clamp(-ppo.reward_clip, ppo.reward_clip);
  if (ppo.reward_norm && n > 1) {
    const at::Tensor all = gather_rows(dp, scores, index, n);
    scores = (scores - all.mean()) / (all.std() + 1e-8);
  }
  const bool kl_in_reward = ppo.kl_mode == "reward";
  if (algorithm_ == Algorithm::kPpo) {
    const at::Tensor rewards = algo::token_rewards(scores, kl, mask, kl_in_reward ? kl_coef : 0.0);
    const algo::GaeResult g = algo::gae(rewards, values, mask, ppo.gamma, ppo.lambda);
    batch.advantages =
        ppo.whiten_advantages ? global_masked_whiten(dp, g.advantages, mask) * mask : g.advantages;
    batch.returns = g.returns;
    batch.old_values = values;
  } else {
    const at::Tensor seq_scores = kl_in_reward ? scores - kl_coef * kl.sum(1) : scores;
    const at::Tensor all_scores = gather_rows(dp, seq_scores, index, n);
    at::Tensor adv;
    if (algorithm_ == Algorithm::kGrpo) {
      adv = algo::group_advantages(all_scores, rows.group, ppo.grpo_scale_std);
    } else {
      at::Tensor base_scores = got.at("base_score");
      if (ppo.reward_clip > 0) base_scores = base_scores.clamp(-ppo.reward_clip, ppo.reward_clip);
      adv = algo::remax_advantages(all_scores, gather_rows(dp, base_scores, index, n));
      // While samples are mostly worse than the greedy answer, r - r_greedy is mostly negative: unwhitened,
      // the update mostly pushes sampled tokens down, entropy grows and the policy collapses on small models.
      // Whitening over the whole batch keeps the greedy baseline's ranking and centres the step.
      if (ppo.whiten_advantages && n > 1) adv = (adv - adv.mean()) / (adv.std() + 1e-8);
    }
    batch.advantages = algo::broadcast_to_tokens(adv.index_select(0, at::tensor(index, at::kLong)), mask);
  }
  // Trained on a batch an older policy sampled (train.staleness > 0): the decoupled objective, its ratio
  // against the proximal policy (actor_inf: the weights this update starts from) and each token's advantage
  // weighted by pi_prox / pi_behaviour (algo/ppo_loss.h behaviour_weights). The KL to the reference stays
  // the behaviour policy's, as without staleness.
  const at::Tensor prox = field("prox_logprobs");
  algo::BehaviourWeights behaviour;
  if (prox.defined()) {
    behaviour = algo::behaviour_weights(prox, batch.old_logprobs, mask, ppo.behaviour_weight_cap);
    batch.advantages = batch.advantages * behaviour.weights;
    batch.old_logprobs = prox;
  }
  if (!stats) return batch;

  // Batch statistics over every row (sums, then ratios), so they do not depend on how many ranks split the
  // batch.
  const at::Tensor x = raw_scores.to(at::kDouble);
  at::Tensor sums =
      at::stack({x.sum(), (x * x).sum(), (kl * mask).sum().to(at::kDouble), kl.sum(1).sum().to(at::kDouble),
                 mask.sum().to(at::kDouble),
                 values.defined() ? (values * mask).sum().to(at::kDouble) : at::zeros({}, at::kDouble)});
  // The batch's responses counted by length, in the same sum (what `realign plan batch.gen_lengths=RUN_DIR`
  // reads back), where the cap keeps the record short.
  const int64_t cap = input_.algorithm.batch.cap();
  const bool count_lengths = cap <= kMaxCountedLength;
  if (count_lengths)
    sums = at::cat({sums, at::bincount(mask.sum(1).to(at::kLong).clamp(0, cap), {}, cap + 1).to(at::kDouble)});
  dp.all_reduce_sum(sums);
  auto total = [&](int i) { return sums[i].item<double>(); };
  const double count = double(std::max<int64_t>(n, 1)), tokens = std::max(1.0, total(4));
  const double reward_mean = total(0) / count;
  *stats = Json{{"reward/mean", reward_mean},
                {"reward/std", std::sqrt(std::max(0.0, total(1) / count - reward_mean * reward_mean))},
                {"response/length", total(4) / count}};
  if (reference) {
    (*stats)["kl/mean"] = total(2) / tokens;
    (*stats)["kl/sequence"] = total(3) / count;
    (*stats)["kl/coef"] = kl_coef;
  }
  if (values.defined()) (*stats)["value/mean"] = total(5) / tokens;
  if (count_lengths) {
    Json counts = Json::array();
    for (int64_t l = 0; l <= cap; ++l) counts.push_back(int64_t(std::llround(total(6 + int(l)))));
    (*stats)["response/length_counts"] = counts;
  }
  if (prox.defined()) {
    // Over every rank's tokens, as the other statistics.
    at::Tensor w = at::stack(
        {behaviour.mean * mask.sum().to(at::kDouble), behaviour.dropped * mask.sum().to(at::kDouble)});
    dp.all_reduce_sum(w);
    (*stats)["behaviour_weight/mean"] = w[0].item<double>() / tokens;
    (*stats)["behaviour_weight/dropped"] = w[1].item<double>() / tokens;
  }
  return batch;
}

}  // namespace realign::train
