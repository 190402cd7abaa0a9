// One RL step, shared by PPO, GRPO and ReMax: generate, score, reference and behaviour log-probs (and
// values), advantages over the whole batch, then the actor and critic updates.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "algo/advantages.h"
#include "algo/gae.h"
#include "algo/kl.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"
#include "train/inference_calls.h"

namespace realign::runtime {

Json Trainer::rl_step(int64_t step) {
  const BatchShape& bs = in_.algorithm.batch;
  const PpoConfig& ppo = t_.ppo;
  const int64_t group = algorithm_ == "grpo" ? std::max<int64_t>(1, bs.samples_per_prompt) : 1;
  const std::vector<int64_t> idx = prompt_sampler_->next(bs.prompts);
  const RlRows rows_of_step{idx, group, bs.prompts * group};
  const int64_t n = rows_of_step.n;
  const Range mine = samples_of(n, place_->batch_layout(), rank());
  std::vector<data::PromptRecord> records;
  for (int64_t i = mine.begin; i < mine.end; ++i) records.push_back(record_of(rows_of_step, i));
  const std::vector<TokenIds> prompts = prompts_of(rows_of_step, mine);

  SamplingOptions so;
  so.max_new_tokens = bs.gen_len;
  so.temperature = t_.sampling.temperature;
  so.top_p = t_.sampling.top_p;
  so.top_k = t_.sampling.top_k;
  so.stop_tokens = codec_.stop_tokens();
  so.pad_id = codec_.pad_id();
  so.seed = mix_seed(t_.seed, uint64_t(step), 0);
  std::vector<std::pair<std::string, SamplingOptions>> generations{{"actor_gen", so}};
  if (algorithm_ == "remax") {
    SamplingOptions greedy = so;
    greedy.greedy = true;
    generations.push_back({"actor_greedy_gen", greedy});
  }
  const std::vector<std::vector<TokenIds>> generated = generate(rows_of_step, generations);
  const std::vector<TokenIds>& responses = generated[0];
  // ReMax's baseline: the greedy responses (empty for other algorithms).
  const std::vector<TokenIds> greedy_responses =
      algorithm_ == "remax" ? generated[1] : std::vector<TokenIds>{};
  SequenceBatch seqs = make_sequence_batch(prompts, responses, codec_.pad_id());
  const at::Tensor& mask = seqs.response_mask;
  const int64_t T = seqs.batch.tokens.size(1);

  const InferFn reward_scores = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return scores_call(ctx, m, b);
  };
  const InferFn logprobs = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return logprobs_call(ctx, m, b);
  };
  const InferFn critic_values = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return values_call(ctx, m, b);
  };
  // Responses cut at gen_len (no stop token at the end) lose ppo.missing_stop_penalty from their score.
  auto with_stop_penalty = [&](const at::Tensor& scores, const std::vector<TokenIds>& resp) {
    if (ppo.missing_stop_penalty <= 0) return scores;
    return scores - missing_stop_penalties(resp, codec_.stop_tokens(), ppo.missing_stop_penalty);
  };
  auto rule_scores = [&](const std::vector<TokenIds>& resp) {
    std::vector<std::string> texts;
    for (const TokenIds& r : resp) texts.push_back(codec_.decode(r));
    return at::tensor(rule_rewards(in_.sections.reward, records, texts), at::kDouble).to(at::kFloat);
  };
  std::vector<Inference> inferences;
  if (reward_) inferences.push_back({"reward_inf", "reward", reward_scores, &responses});
  if (reward_ && algorithm_ == "remax")
    inferences.push_back({"reward_greedy_inf", "reward", reward_scores, &greedy_responses});
  inferences.push_back({"ref_inf", "ref", logprobs, &responses});
  inferences.push_back({"actor_inf", "actor", logprobs, &responses});
  if (critic_) inferences.push_back({"critic_inf", "critic", critic_values, &responses});
  const std::map<std::string, at::Tensor> inferred = infer(rows_of_step, inferences, T);
  at::Tensor scores =
      with_stop_penalty(reward_ ? inferred.at("reward_inf") : rule_scores(responses), responses);
  const at::Tensor raw_scores = scores.clone();
  const at::Tensor ref_lp = inferred.at("ref_inf"), old_lp = inferred.at("actor_inf");
  const at::Tensor values = critic_ ? inferred.at("critic_inf") : at::Tensor();

  algo::KlEstimator est = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  at::Tensor kl = algo::kl_per_token(old_lp, ref_lp, est) * mask;
  const double kl_coef = kl_ctl_->coef();
  // Normalisation and advantages use the whole batch (every rank's rows), so they do not depend on the split.
  if (ppo.reward_clip > 0) scores = scores.clamp(-ppo.reward_clip, ppo.reward_clip);
  if (ppo.reward_norm && n > 1) {
    const at::Tensor all = gather_rows(*world_, scores, mine, n);
    scores = (scores - all.mean()) / (all.std() + 1e-8);
  }

  PpoBatch batch;
  batch.seqs = seqs;
  batch.old_logprobs = old_lp;
  batch.ref_logprobs = ref_lp;
  const bool kl_in_reward = ppo.kl_mode == "reward";
  if (algorithm_ == "ppo") {
    at::Tensor rewards = algo::token_rewards(scores, kl, mask, kl_in_reward ? kl_coef : 0.0);
    algo::GaeResult g = algo::gae(rewards, values, mask, ppo.gamma, ppo.lambda);
    batch.advantages =
        ppo.whiten_advantages ? global_masked_whiten(*world_, g.advantages, mask) * mask : g.advantages;
    batch.returns = g.returns;
    batch.old_values = values;
  } else {
    at::Tensor seq_scores = kl_in_reward ? scores - kl_coef * kl.sum(1) : scores;
    const at::Tensor all_scores = gather_rows(*world_, seq_scores, mine, n);
    at::Tensor adv;
    if (algorithm_ == "grpo") {
      adv = algo::group_advantages(all_scores, group, ppo.grpo_scale_std);
    } else {
      at::Tensor base_scores = with_stop_penalty(
          reward_ ? inferred.at("reward_greedy_inf") : rule_scores(greedy_responses), greedy_responses);
      if (ppo.reward_clip > 0) base_scores = base_scores.clamp(-ppo.reward_clip, ppo.reward_clip);
      adv = algo::remax_advantages(all_scores, gather_rows(*world_, base_scores, mine, n));
      // While samples are mostly worse than the greedy answer, r - r_greedy is mostly negative: unwhitened,
      // the update mostly pushes sampled tokens down, entropy grows and the policy collapses on small models.
      // Whitening over the whole batch keeps the greedy baseline's ranking and centres the step.
      if (ppo.whiten_advantages && n > 1) adv = (adv - adv.mean()) / (adv.std() + 1e-8);
    }
    batch.advantages = algo::broadcast_to_tokens(adv.narrow(0, mine.begin, mine.size()), mask);
  }

  ActorOptions ao;
  ao.clip_eps = ppo.clip_eps;
  ao.kl_loss_coef = kl_in_reward ? 0.0 : kl_coef;
  ao.kl_estimator = est;
  ao.entropy_coef = ppo.entropy_coef;
  ao.early_stop_kl = ppo.early_stop_kl;
  ao.epochs = bs.epochs;
  ao.mini_batches = bs.mini_batches;

  // The actor and critic updates run together (on disjoint devices they overlap); their statistics come from
  // each call's first rank (a call may run on a subset of the ranks).
  Json actor_stats, critic_stats = Json::object();
  const PpoBatch actor_batch = train_batch(rows_of_step, "actor_train", "actor", responses, batch);
  const PpoBatch critic_batch =
      critic_ ? train_batch(rows_of_step, "critic_train", "critic", responses, batch) : PpoBatch{};
  std::vector<Call> updates{{"actor_train", "actor", [&](const CallContext& ctx, model::Transformer&) {
                               const ActorStats as = actor_train_call(ctx, *actor_, actor_batch, ao);
                               actor_stats = Json{{"loss/policy", as.policy_loss},
                                                  {"entropy", as.entropy},
                                                  {"clip_fraction", as.clip_fraction},
                                                  {"approx_kl", as.approx_kl},
                                                  {"grad_norm/actor", as.grad_norm},
                                                  {"lr", as.lr},
                                                  {"updates", as.updates}};
                               if (ao.kl_loss_coef > 0) actor_stats["loss/kl"] = as.kl_loss;
                               if (as.early_stopped) actor_stats["early_stopped"] = true;
                             }}};
  if (critic_)
    updates.push_back(
        {"critic_train", "critic", [&](const CallContext& ctx, model::Transformer&) {
           const CriticStats cs =
               critic_train_call(ctx, *critic_, critic_batch, ppo.value_clip, bs.epochs, bs.mini_batches);
           critic_stats = Json{{"loss/value", cs.value_loss}, {"grad_norm/critic", cs.grad_norm}};
         }});
  run_together(updates);
  actor_stats = from_call("actor_train", "actor", actor_stats);
  if (critic_) critic_stats = from_call("critic_train", "critic", critic_stats);

  // Batch statistics over every rank's rows (sums, then ratios), so they do not depend on how many ranks
  // split the batch.
  const at::Tensor x = raw_scores.to(at::kDouble);
  at::Tensor sums =
      at::stack({x.sum(), (x * x).sum(), (kl * mask).sum().to(at::kDouble), kl.sum(1).sum().to(at::kDouble),
                 mask.sum().to(at::kDouble),
                 values.defined() ? (values * mask).sum().to(at::kDouble) : at::zeros({}, at::kDouble)});
  world_->all_reduce_sum(sums);
  auto total = [&](int i) { return sums[i].item<double>(); };
  const double rows = double(std::max<int64_t>(n, 1)), tokens = std::max(1.0, total(4));
  const double reward_mean = total(0) / rows;
  const std::vector<double> m{
      reward_mean,       std::sqrt(std::max(0.0, total(1) / rows - reward_mean * reward_mean)),
      total(2) / tokens, total(3) / rows,
      total(4) / rows,   total(5) / tokens};
  if (ppo.adaptive_kl) kl_ctl_->update(m[3], bs.prompts * group);
  Json j{{"reward/mean", m[0]}, {"reward/std", m[1]}, {"kl/mean", m[2]},
         {"kl/sequence", m[3]}, {"kl/coef", kl_coef}, {"response/length", m[4]}};
  j.update(actor_stats);
  j.update(critic_stats);
  if (critic_) j["value/mean"] = m[5];
  return j;
}

}  // namespace realign::runtime
