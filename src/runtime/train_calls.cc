#include "runtime/train_calls.h"

#include <ATen/ATen.h>

#include "algo/masked.h"
#include "algo/ppo_loss.h"
#include "algo/preference_loss.h"
#include "runtime/call_forward.h"
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
  ActorStats stats;
  const auto bounds = mini_batch_bounds(batch.seqs.size(), o.mini_batches);
  for (int64_t epoch = 0; epoch < o.epochs && !stats.early_stopped; ++epoch) {
    for (auto [b0, b1] : bounds) {
      SequenceBatch mb = slice_rows(batch.seqs, b0, b1);
      algo::PolicyLoss pl{};
      double kl_loss = 0, entropy = 0;
      backward_loss(
          ctx, *actor.model, {&mb}, HeadKindOut::kLogprobsEntropy, [&](const std::vector<HeadOutputs>& out) {
            const at::Tensor& logprobs = out[0].logprobs;
            const at::Tensor& mask = mb.response_mask;
            pl = algo::ppo_policy_loss(logprobs, rows(batch.old_logprobs, b0, b1),
                                       rows(batch.advantages, b0, b1), mask, o.clip_eps, o.clip_eps);
            at::Tensor loss = pl.loss;
            at::Tensor ent = algo::masked_mean(out[0].entropy, mask);
            if (o.kl_loss_coef > 0) {
              at::Tensor kl = algo::masked_mean(
                  algo::kl_per_token(logprobs, rows(batch.ref_logprobs, b0, b1), o.kl_estimator), mask);
              loss = loss + o.kl_loss_coef * kl;
              kl_loss = kl.item<double>();
            }
            if (o.entropy_coef != 0) loss = loss - o.entropy_coef * ent;
            entropy = ent.item<double>();
            return loss;
          });
      UpdateInfo u = apply_gradients(ctx, actor);
      std::vector<double> m =
          dp_mean(ctx, {pl.loss.item<double>(), kl_loss, entropy, pl.clip_fraction, pl.approx_kl});
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
  CriticStats stats;
  const auto bounds = mini_batch_bounds(batch.seqs.size(), mini_batches);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (auto [b0, b1] : bounds) {
      SequenceBatch mb = slice_rows(batch.seqs, b0, b1);
      algo::ValueLoss vl{};
      backward_loss(ctx, *critic.model, {&mb}, HeadKindOut::kValues,
                    [&](const std::vector<HeadOutputs>& out) {
                      vl = algo::ppo_value_loss(out[0].values, rows(batch.old_values, b0, b1),
                                                rows(batch.returns, b0, b1), mb.response_mask, value_clip);
                      return vl.loss;
                    });
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
  at::Tensor loss = backward_loss(ctx, *m.model, {&batch}, HeadKindOut::kLogprobs,
                                  [&](const std::vector<HeadOutputs>& out) {
                                    return -algo::masked_mean(out[0].logprobs, batch.response_mask);
                                  });
  UpdateInfo u = apply_gradients(ctx, m);
  return SftStats{dp_mean(ctx, {loss.item<double>()})[0], u.grad_norm, u.lr};
}

PairStats reward_model_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& chosen,
                                  const SequenceBatch& rejected) {
  algo::PairLoss pl{};
  backward_loss(ctx, *m.model, {&chosen, &rejected}, HeadKindOut::kValues,
                [&](const std::vector<HeadOutputs>& out) {
                  pl = algo::bradley_terry_loss(last_response_value(out[0].values, chosen),
                                                last_response_value(out[1].values, rejected));
                  return pl.loss;
                });
  UpdateInfo u = apply_gradients(ctx, m);
  std::vector<double> v = dp_mean(ctx, {pl.loss.item<double>(), pl.accuracy, pl.margin});
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

PairStats dpo_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& chosen,
                         const SequenceBatch& rejected, const at::Tensor& ref_chosen,
                         const at::Tensor& ref_rejected, double beta, double label_smoothing) {
  algo::PairLoss pl{};
  backward_loss(ctx, *m.model, {&chosen, &rejected}, HeadKindOut::kLogprobs,
                [&](const std::vector<HeadOutputs>& out) {
                  pl = algo::dpo_loss(sum_over_response(out[0].logprobs, chosen),
                                      sum_over_response(out[1].logprobs, rejected), ref_chosen, ref_rejected,
                                      beta, label_smoothing);
                  return pl.loss;
                });
  UpdateInfo u = apply_gradients(ctx, m);
  std::vector<double> v = dp_mean(ctx, {pl.loss.item<double>(), pl.accuracy, pl.margin});
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

}  // namespace realign::runtime
