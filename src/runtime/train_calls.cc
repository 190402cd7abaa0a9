#include "runtime/train_calls.h"

#include <ATen/ATen.h>

#include "algo/masked.h"
#include "algo/ppo_loss.h"
#include "algo/preference_loss.h"
#include "core/check.h"
#include "realloc/data_plan.h"
#include "runtime/call_forward.h"
#include "runtime/inference_calls.h"

namespace realign::runtime {
namespace {

at::Tensor rows(const at::Tensor& t, int64_t begin, int64_t end) { return t.slice(0, begin, end); }

// This rank's rows of each mini-batch, as local row ranges: its shares of the whole batch's segments.
std::vector<std::pair<int64_t, int64_t>> mini_batch_bounds(const CallContext& ctx, int64_t local_rows,
                                                           int64_t mini_batches) {
  at::Tensor total = at::tensor({local_rows}, at::kLong);
  if (ctx.dp->size() > 1) ctx.dp->all_reduce_sum(total);
  const int64_t n = total.item<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t begin = 0;
  for (const Range& share : segment_shares(n, mini_batch_count(n, mini_batches), ctx.dp->rank(), ctx.dp->size())) {
    out.emplace_back(begin, begin + share.size());
    begin += share.size();
  }
  REALIGN_CHECK(begin == local_rows) << ctx.name << ": " << local_rows << " rows are not this rank's shares of "
                                     << out.size() << " mini-batches of " << n;
  return out;
}

double mask_tokens(const SequenceBatch& b) { return b.response_mask.sum().item<double>(); }

}  // namespace

int64_t mini_batch_count(int64_t rows, int64_t mini_batches) {
  return std::max<int64_t>(1, std::min(mini_batches, rows));
}

ActorStats actor_train_call(const CallContext& ctx, TrainedModel& actor, const PpoBatch& batch,
                            const ActorOptions& o) {
  ActorStats stats;
  const auto bounds = mini_batch_bounds(ctx, batch.seqs.size(), o.mini_batches);
  for (int64_t epoch = 0; epoch < o.epochs && !stats.early_stopped; ++epoch) {
    for (auto [b0, b1] : bounds) {
      SequenceBatch mb = slice_rows(batch.seqs, b0, b1);
      const double w = dp_weight(ctx, mask_tokens(mb));
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
            return loss * w;
          });
      UpdateInfo u = apply_gradients(ctx, actor);
      std::vector<double> m = dp_mean(ctx, {pl.loss.item<double>() * w, kl_loss * w, entropy * w,
                                            pl.clip_fraction * w, pl.approx_kl * w});
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
  const auto bounds = mini_batch_bounds(ctx, batch.seqs.size(), mini_batches);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (auto [b0, b1] : bounds) {
      SequenceBatch mb = slice_rows(batch.seqs, b0, b1);
      const double w = dp_weight(ctx, mask_tokens(mb));
      algo::ValueLoss vl{};
      backward_loss(ctx, *critic.model, {&mb}, HeadKindOut::kValues,
                    [&](const std::vector<HeadOutputs>& out) {
                      vl = algo::ppo_value_loss(out[0].values, rows(batch.old_values, b0, b1),
                                                rows(batch.returns, b0, b1), mb.response_mask, value_clip);
                      return vl.loss * w;
                    });
      UpdateInfo u = apply_gradients(ctx, critic);
      std::vector<double> m = dp_mean(ctx, {vl.loss.item<double>() * w, vl.clip_fraction * w});
      stats.value_loss += m[0], stats.clip_fraction += m[1], stats.grad_norm += u.grad_norm;
      ++stats.updates;
    }
  }
  double n = double(std::max<int64_t>(stats.updates, 1));
  stats.value_loss /= n, stats.clip_fraction /= n, stats.grad_norm /= n;
  return stats;
}

SftStats sft_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& batch) {
  const double w = dp_weight(ctx, mask_tokens(batch));
  at::Tensor loss = backward_loss(ctx, *m.model, {&batch}, HeadKindOut::kLogprobs,
                                  [&](const std::vector<HeadOutputs>& out) {
                                    return -algo::masked_mean(out[0].logprobs, batch.response_mask) * w;
                                  });
  UpdateInfo u = apply_gradients(ctx, m);
  return SftStats{dp_mean(ctx, {loss.item<double>()})[0], u.grad_norm, u.lr};
}

PairStats reward_model_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& chosen,
                                  const SequenceBatch& rejected) {
  const double w = dp_weight(ctx, double(chosen.size()));
  algo::PairLoss pl{};
  backward_loss(ctx, *m.model, {&chosen, &rejected}, HeadKindOut::kValues,
                [&](const std::vector<HeadOutputs>& out) {
                  pl = algo::bradley_terry_loss(last_response_value(out[0].values, chosen),
                                                last_response_value(out[1].values, rejected));
                  return pl.loss * w;
                });
  UpdateInfo u = apply_gradients(ctx, m);
  std::vector<double> v = dp_mean(ctx, {pl.loss.item<double>() * w, pl.accuracy * w, pl.margin * w});
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

PairStats dpo_train_call(const CallContext& ctx, TrainedModel& m, const SequenceBatch& chosen,
                         const SequenceBatch& rejected, const at::Tensor& ref_chosen,
                         const at::Tensor& ref_rejected, double beta, double label_smoothing) {
  const double w = dp_weight(ctx, double(chosen.size()));
  algo::PairLoss pl{};
  backward_loss(ctx, *m.model, {&chosen, &rejected}, HeadKindOut::kLogprobs,
                [&](const std::vector<HeadOutputs>& out) {
                  pl = algo::dpo_loss(sum_over_response(out[0].logprobs, chosen),
                                      sum_over_response(out[1].logprobs, rejected), ref_chosen, ref_rejected,
                                      beta, label_smoothing);
                  return pl.loss * w;
                });
  UpdateInfo u = apply_gradients(ctx, m);
  std::vector<double> v = dp_mean(ctx, {pl.loss.item<double>() * w, pl.accuracy * w, pl.margin * w});
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

}  // namespace realign::runtime
