// The PPO-family update calls' bodies: the actor's policy loss (PPO, GRPO, ReMax differ only in the
// advantages rl_batch computes) and the critic's value loss, each over the call's mini-batch segments.
#include <ATen/ATen.h>

#include "train/detail/trainer_impl.h"

namespace realign::train {

Trainer::Call Trainer::policy_update_body(const BodyInput& b) {
  const Mfc& m = b.m;
  Iteration& it = b.it;
  const runtime::Rows& in = b.in;
  Json* stats = b.stats;
  const PpoConfig& ppo = train_config_.ppo;
  const double kl_coef = kl_ctl_->coef();
  const int64_t segments = mini_batch_count(it.rows.n, m.mini_batches);
  ActorOptions ao;
  ao.clip_eps = ppo.clip_eps;
  ao.kl_loss_coef = ppo.kl_mode == "reward" ? 0.0 : kl_coef;
  ao.kl_estimator = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  ao.entropy_coef = ppo.entropy_coef;
  ao.early_stop_kl = ppo.early_stop_kl;
  ao.epochs = m.epochs;
  ao.mini_batches = m.mini_batches;
  return {m.name, m.model,
          [this, &m, &it, &in, stats, kl_coef, segments, ao](const runtime::CallContext& ctx,
                                                             model::Transformer&) {
            Json batch_stats;
            const PpoBatch batch =
                rl_batch(ctx, it.rows, in, segmented_rows(m.name, m.model, it.rows.n, segments), kl_coef,
                         &batch_stats);
            const ActorStats as = actor_train_call(ctx, trained(m.model), batch, ao);
            *stats = Json{{"loss/policy", as.policy_loss},
                          {"entropy", as.entropy},
                          {"clip_fraction", as.clip_fraction},
                          {"approx_kl", as.approx_kl},
                          {"grad_norm/actor", as.grad_norm},
                          {"lr", as.lr},
                          {"updates", as.updates}};
            if (ao.kl_loss_coef > 0) (*stats)["loss/kl"] = as.kl_loss;
            if (as.early_stopped) (*stats)["early_stopped"] = true;
            stats->update(batch_stats);
          }};
}

Trainer::Call Trainer::value_update_body(const BodyInput& b) {
  const Mfc& m = b.m;
  Iteration& it = b.it;
  const runtime::Rows& in = b.in;
  Json* stats = b.stats;
  const double kl_coef = kl_ctl_->coef();
  const int64_t segments = mini_batch_count(it.rows.n, m.mini_batches);
  return {
      m.name, m.model,
      [this, &m, &it, &in, stats, kl_coef, segments](const runtime::CallContext& ctx, model::Transformer&) {
        const PpoBatch batch = rl_batch(
            ctx, it.rows, in, segmented_rows(m.name, m.model, it.rows.n, segments), kl_coef, nullptr);
        const CriticStats cs = critic_train_call(ctx, trained(m.model), batch, train_config_.ppo.value_clip,
                                                 m.epochs, m.mini_batches);
        *stats = Json{{"loss/value", cs.value_loss}, {"grad_norm/critic", cs.grad_norm}};
      }};
}

}  // namespace realign::train
