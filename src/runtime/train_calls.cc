#include "runtime/train_calls.h"

#include <ATen/ATen.h>

#include "algo/masked.h"
#include "algo/ppo_loss.h"
#include "algo/preference_loss.h"
#include "runtime/inference_calls.h"

namespace realign::runtime {
namespace {

at::Tensor rows(const at::Tensor& t, int64_t begin, int64_t end) { return t.slice(0, begin, end); }

// Mini-batch boundaries: `n` contiguous, near-equal slices of `B` rows (the rows are already in random
// order).
std::vector<std::pair<int64_t, int64_t>> mini_batch_bounds(int64_t B, int64_t n) {
  n = std::max<int64_t>(1, std::min(n, B));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < n; ++i) out.emplace_back(B * i / n, B * (i + 1) / n);
  return out;
}

}  // namespace

ActorStats actor_train_call(const CallContext& ctx, TrainedModel& actor, const PpoBatch& batch,
                            const ActorOptions& o) {
  require_single_stage(ctx);
  ActorStats stats;
  const auto bounds = mini_batch_bounds(batch.seqs.size(), o.mini_batches);
  for (int64_t epoch = 0; epoch < o.epochs && !stats.early_stopped; ++epoch) {
    for (auto [b0, b1] : bounds) {
      SequenceBatch mb = slice_rows(batch.seqs, b0, b1);
      at::Tensor hidden = actor.model->forward(mb.batch);
      at::Tensor entropy;
      at::Tensor logprobs = actor.model->token_logprobs(hidden, mb.targets, &entropy);
      const at::Tensor& mask = mb.response_mask;
      algo::PolicyLoss pl =
          algo::ppo_policy_loss(logprobs, rows(batch.old_logprobs, b0, b1), rows(batch.advantages, b0, b1),
                                mask, o.clip_eps, o.clip_eps);
      at::Tensor loss = pl.loss;
      at::Tensor ent = algo::masked_mean(entropy, mask);
      double kl_loss = 0;
      if (o.kl_loss_coef > 0) {
        at::Tensor kl = algo::masked_mean(
            algo::kl_per_token(logprobs, rows(batch.ref_logprobs, b0, b1), o.kl_estimator), mask);
        loss = loss + o.kl_loss_coef * kl;
        kl_loss = kl.item<double>();
      }
      if (o.entropy_coef != 0) loss = loss - o.entropy_coef * ent;
      loss.backward();
      UpdateInfo u = apply_gradients(ctx, actor);
      std::vector<double> m =
          dp_mean(ctx, {pl.loss.item<double>(), kl_loss, ent.item<double>(), pl.clip_fraction, pl.approx_kl});
      stats.policy_loss += m[0], stats.kl_loss += m[1], stats.entropy += m[2], stats.clip_fraction += m[3];
      stats.approx_kl += m[4], stats.grad_norm += u.grad_norm, stats.lr = u.lr;
      ++stats.updates;
      if (o.early_stop_kl > 0 && m[4] > o.early_stop_kl) {
        stats.early_stopped = true;
        break;
      }
    }
  }
  double n = double(std::max<int64_t>(stats.updates, 1));
  stats.policy_loss /= n, stats.kl_loss /= n, stats.entropy /= n, stats.clip_fraction /= n,
      stats.approx_kl /= n;
  stats.grad_norm /= n;
  return stats;
}

CriticStats critic_train_call(const CallContext& ctx, TrainedModel& critic, const PpoBatch& batch,
                              double value_clip, int64_t epochs, int64_t mini_batches) {
  require_single_stage(ctx);
  CriticStats stats;
  const auto bounds = mini_batch_bounds(batch.seqs.size(), mini_batches);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (auto [b0, b1] : bounds) {
      SequenceBatch mb = slice_rows(batch.seqs, b0, b1);
      at::Tensor values = critic.model->values(critic.model->forward(mb.batch));
      algo::ValueLoss vl = algo::ppo_value_loss(values, rows(batch.old_values, b0, b1),
                                                rows(batch.returns, b0, b1), mb.response_mask, value_clip);
      vl.loss.backward();
      UpdateInfo u = apply_gradients(ctx, critic);
      std::vector<double> m = dp_mean(ctx, {vl.loss.item<double>(), vl.clip_fraction});
      stats.value_loss += m[0], stats.clip_fraction += m[1], stats.grad_norm += u.grad_norm;
      ++stats.updates;
    }
  }
  double n = double(std::max<int64_t>(stats.updates, 1));
  stats.value_loss /= n, stats.clip_fraction /= n, stats.grad_norm /= n;
  return stats;
}

SftStats sft_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& batch) {
  require_single_stage(ctx);
  at::Tensor logprobs = m.model->token_logprobs(m.model->forward(batch.batch), batch.targets);
  at::Tensor loss = -algo::masked_mean(logprobs, batch.response_mask);
  loss.backward();
  UpdateInfo u = apply_gradients(ctx, m);
  return SftStats{dp_mean(ctx, {loss.item<double>()})[0], u.grad_norm, u.lr};
}

PairStats reward_model_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& chosen,
                                  const SequenceBatch& rejected) {
  require_single_stage(ctx);
  at::Tensor sc = last_response_value(m.model->values(m.model->forward(chosen.batch)), chosen);
  at::Tensor sr = last_response_value(m.model->values(m.model->forward(rejected.batch)), rejected);
  algo::PairLoss pl = algo::bradley_terry_loss(sc, sr);
  pl.loss.backward();
  UpdateInfo u = apply_gradients(ctx, m);
  std::vector<double> v = dp_mean(ctx, {pl.loss.item<double>(), pl.accuracy, pl.margin});
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

PairStats dpo_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& chosen,
                         const SequenceBatch& rejected, const at::Tensor& ref_chosen,
                         const at::Tensor& ref_rejected, double beta, double label_smoothing) {
  require_single_stage(ctx);
  at::Tensor lc =
      sum_over_response(m.model->token_logprobs(m.model->forward(chosen.batch), chosen.targets), chosen);
  at::Tensor lr = sum_over_response(
      m.model->token_logprobs(m.model->forward(rejected.batch), rejected.targets), rejected);
  algo::PairLoss pl = algo::dpo_loss(lc, lr, ref_chosen, ref_rejected, beta, label_smoothing);
  pl.loss.backward();
  UpdateInfo u = apply_gradients(ctx, m);
  std::vector<double> v = dp_mean(ctx, {pl.loss.item<double>(), pl.accuracy, pl.margin});
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

}  // namespace realign::runtime
