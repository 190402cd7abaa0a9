// One RL step, shared by PPO, GRPO and ReMax: generate, score, reference and behaviour log-probs (and
// values), then the actor and critic updates, each computing the advantages over the whole batch on its own
// ranks from the rows its producers sent (rl_batch.cc). No layout holds the batch in between: rows go from
// the ranks that produced them straight to the ranks that consume them (rl_rows.cc).
#include <ATen/ATen.h>

#include <algorithm>

#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"
#include "train/inference_calls.h"

namespace realign::runtime {

Json Trainer::rl_step(int64_t step) {
  const BatchShape& bs = in_.algorithm.batch;
  const PpoConfig& ppo = t_.ppo;
  const int64_t group = algorithm_ == "grpo" ? std::max<int64_t>(1, bs.samples_per_prompt) : 1;
  const std::vector<int64_t> idx = prompt_sampler_->next(bs.prompts);
  const RlRows rows{idx, group, bs.prompts * group};
  const int64_t n = rows.n;
  const bool remax = algorithm_ == "remax";

  SamplingOptions so;
  so.max_new_tokens = bs.gen_len;
  so.temperature = t_.sampling.temperature;
  so.top_p = t_.sampling.top_p;
  so.top_k = t_.sampling.top_k;
  so.stop_tokens = codec_.stop_tokens();
  so.pad_id = codec_.pad_id();
  so.seed = mix_seed(t_.seed, uint64_t(step), 0);
  // Without a reward model the generation scores its own rows (rule rewards); ReMax's greedy responses are
  // its baseline.
  // The behaviour log-probs come from the sampling itself, or from actor_inf below.
  const bool from_sampling = ppo.behaviour_logprobs == "generation";
  std::vector<Generation> generations{
      {"actor_gen", so, reward_ ? "" : "score", from_sampling ? "old_logprobs" : ""}};
  if (remax) {
    SamplingOptions greedy = so;
    greedy.greedy = true;
    generations.push_back({"actor_greedy_gen", greedy, reward_ ? "" : "base_score", ""});
  }
  const std::vector<Produced> generated = generate(rows, generations);

  const InferFn reward_scores = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return scores_call(ctx, m, b);
  };
  const InferFn logprobs = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return logprobs_call(ctx, m, b);
  };
  const InferFn critic_values = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return values_call(ctx, m, b);
  };
  std::vector<Inference> inferences;
  if (reward_) inferences.push_back({"reward_inf", "reward", reward_scores, &generated[0], "score", true});
  if (reward_ && remax)
    inferences.push_back({"reward_greedy_inf", "reward", reward_scores, &generated[1], "base_score", true});
  inferences.push_back({"ref_inf", "ref", logprobs, &generated[0], "ref_logprobs", false});
  if (!from_sampling)
    inferences.push_back({"actor_inf", "actor", logprobs, &generated[0], "old_logprobs", false});
  if (critic_) inferences.push_back({"critic_inf", "critic", critic_values, &generated[0], "values", false});
  const std::vector<Produced> inferred = infer(rows, inferences);

  // What the train calls read, straight from its producers: the responses (and rule scores), every
  // inference's output, ReMax's baseline scores.
  std::vector<Input> inputs{{&generated[0], {"response", "response_len", "score"}}};
  if (from_sampling) inputs[0].fields.push_back("old_logprobs");
  if (remax) inputs.push_back({&generated[1], {"base_score"}});
  for (const Produced& p : inferred) inputs.push_back({&p, {}});
  for (Input& in : inputs)
    if (in.fields.empty())
      for (const auto& f : in.from->rows) in.fields.push_back(f.first);
  const int64_t segments = mini_batch_count(n, bs.mini_batches);
  std::vector<Consumer> consumers{{"actor_train", "actor", inputs, segments}};
  if (critic_) consumers.push_back({"critic_train", "critic", inputs, segments});
  const std::vector<Rows> train_rows = bring_inputs(n, consumers);

  const algo::KlEstimator est = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  const double kl_coef = kl_ctl_->coef();
  const bool kl_in_reward = ppo.kl_mode == "reward";
  ActorOptions ao;
  ao.clip_eps = ppo.clip_eps;
  ao.kl_loss_coef = kl_in_reward ? 0.0 : kl_coef;
  ao.kl_estimator = est;
  ao.entropy_coef = ppo.entropy_coef;
  ao.early_stop_kl = ppo.early_stop_kl;
  ao.epochs = bs.epochs;
  ao.mini_batches = bs.mini_batches;

  // The actor and critic updates run together (on disjoint devices they overlap); their statistics come from
  // each call's first rank (a call may run on a subset of the ranks), the batch statistics from the actor's.
  Json actor_stats, critic_stats = Json::object();
  std::vector<Call> updates{{"actor_train", "actor", [&](const CallContext& ctx, model::Transformer&) {
                               Json batch_stats;
                               const PpoBatch batch = rl_batch(ctx, rows, train_rows[0],
                                                               rows_of("actor_train", "actor", n, segments),
                                                               kl_coef, &batch_stats);
                               const ActorStats as = actor_train_call(ctx, *actor_, batch, ao);
                               actor_stats = Json{{"loss/policy", as.policy_loss},
                                                  {"entropy", as.entropy},
                                                  {"clip_fraction", as.clip_fraction},
                                                  {"approx_kl", as.approx_kl},
                                                  {"grad_norm/actor", as.grad_norm},
                                                  {"lr", as.lr},
                                                  {"updates", as.updates}};
                               if (ao.kl_loss_coef > 0) actor_stats["loss/kl"] = as.kl_loss;
                               if (as.early_stopped) actor_stats["early_stopped"] = true;
                               actor_stats.update(batch_stats);
                             }}};
  if (critic_)
    updates.push_back(
        {"critic_train", "critic", [&](const CallContext& ctx, model::Transformer&) {
           const PpoBatch batch = rl_batch(ctx, rows, train_rows[1],
                                           rows_of("critic_train", "critic", n, segments), kl_coef, nullptr);
           const CriticStats cs =
               critic_train_call(ctx, *critic_, batch, ppo.value_clip, bs.epochs, bs.mini_batches);
           critic_stats = Json{{"loss/value", cs.value_loss}, {"grad_norm/critic", cs.grad_norm}};
         }});
  run_together(updates);
  Json j = from_call("actor_train", "actor", actor_stats);
  if (critic_) j.update(from_call("critic_train", "critic", critic_stats));
  if (ppo.adaptive_kl) kl_ctl_->update(j["kl/sequence"].get<double>(), bs.prompts * group);
  return j;
}

}  // namespace realign::runtime
