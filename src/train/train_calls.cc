#include "train/train_calls.h"

#include <ATen/ATen.h>

#include "algo/masked.h"
#include "algo/ppo_loss.h"
#include "algo/preference_loss.h"
#include "core/check.h"
#include "realloc/data_plan.h"
#include "runtime/call_forward.h"
#include "train/inference_calls.h"

namespace realign::train {
namespace {

at::Tensor rows(const at::Tensor& t, int64_t begin, int64_t end) { return t.slice(0, begin, end); }

// This rank's rows of each mini-batch, as local row ranges: its shares of the whole batch's segments.
std::vector<std::pair<int64_t, int64_t>> mini_batch_bounds(const runtime::CallContext& ctx,
                                                           int64_t local_rows, int64_t mini_batches) {
  at::Tensor total = at::tensor({local_rows}, at::kLong);
  if (ctx.dp->size() > 1) ctx.dp->all_reduce_sum(total);
  const int64_t n = total.item<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t begin = 0;
  for (const Range& share :
       segment_shares(n, mini_batch_count(n, mini_batches), ctx.dp->rank(), ctx.dp->size())) {
    out.emplace_back(begin, begin + share.size());
    begin += share.size();
  }
  REALIGN_CHECK(begin == local_rows) << ctx.name << ": " << local_rows
                                     << " rows are not this rank's shares of " << out.size()
                                     << " mini-batches of " << n;
  return out;
}

double mask_tokens(const runtime::SequenceBatch& b) { return b.response_mask.sum().item<double>(); }

// The factor that turns a sum over this rank's items (tokens or pairs; `count` of them) into its share of the
// mean over the whole dp group's items (dp_weight / count): losses summed per micro-batch then add up to it.
double sum_scale(const runtime::CallContext& ctx, double count) {
  const double w = runtime::dp_weight(ctx, count);
  return count > 0 ? w / count : 0.0;
}

std::vector<double> scaled(std::vector<double> v, double k) {
  for (double& x : v) x *= k;
  return v;
}

}  // namespace

int64_t mini_batch_count(int64_t rows, int64_t mini_batches) {
  return std::max<int64_t>(1, std::min(mini_batches, rows));
}

ActorStats actor_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& actor,
                            const PpoBatch& batch, const ActorOptions& o) {
  ActorStats stats;
  const auto bounds = mini_batch_bounds(ctx, batch.seqs.size(), o.mini_batches);
  for (int64_t epoch = 0; epoch < o.epochs && !stats.early_stopped; ++epoch) {
    for (auto [b0, b1] : bounds) {
      runtime::SequenceBatch mb = runtime::slice_rows(batch.seqs, b0, b1);
      const double k = sum_scale(ctx, mask_tokens(mb));
      // Per micro-batch (rows [r0, r1) of the mini-batch): token means times its token count, i.e. sums.
      const runtime::LossSums sums = runtime::backward_loss(
          ctx, *actor.model, {&mb}, runtime::HeadKindOut::kLogprobsEntropy, 5,
          [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
            const at::Tensor& logprobs = out[0].logprobs;
            const at::Tensor mask = rows(mb.response_mask, r0, r1);
            const double tokens = k * mask.sum().item<double>();
            const algo::PolicyLoss pl =
                algo::ppo_policy_loss(logprobs, rows(batch.old_logprobs, b0 + r0, b0 + r1),
                                      rows(batch.advantages, b0 + r0, b0 + r1), mask, o.clip_eps, o.clip_eps);
            at::Tensor loss = pl.loss;
            const at::Tensor ent = algo::masked_mean(out[0].entropy, mask);
            double kl_loss = 0;
            if (o.kl_loss_coef > 0) {
              const at::Tensor kl = algo::masked_mean(
                  algo::kl_per_token(logprobs, rows(batch.ref_logprobs, b0 + r0, b0 + r1), o.kl_estimator),
                  mask);
              loss = loss + o.kl_loss_coef * kl;
              kl_loss = kl.item<double>();
            }
            if (o.entropy_coef != 0) loss = loss - o.entropy_coef * ent;
            return runtime::RowsLoss{
                loss * tokens,
                scaled({pl.loss.item<double>(), kl_loss, ent.item<double>(), pl.clip_fraction, pl.approx_kl},
                       tokens)};
          });
      runtime::UpdateInfo u = runtime::apply_gradients(ctx, actor);
      std::vector<double> m = runtime::dp_mean(ctx, sums.stats);
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

CriticStats critic_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& critic,
                              const PpoBatch& batch, double value_clip, int64_t epochs,
                              int64_t mini_batches) {
  CriticStats stats;
  const auto bounds = mini_batch_bounds(ctx, batch.seqs.size(), mini_batches);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (auto [b0, b1] : bounds) {
      runtime::SequenceBatch mb = runtime::slice_rows(batch.seqs, b0, b1);
      const double k = sum_scale(ctx, mask_tokens(mb));
      const runtime::LossSums sums = runtime::backward_loss(
          ctx, *critic.model, {&mb}, runtime::HeadKindOut::kValues, 2,
          [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
            const at::Tensor mask = rows(mb.response_mask, r0, r1);
            const double tokens = k * mask.sum().item<double>();
            const algo::ValueLoss vl =
                algo::ppo_value_loss(out[0].values, rows(batch.old_values, b0 + r0, b0 + r1),
                                     rows(batch.returns, b0 + r0, b0 + r1), mask, value_clip);
            return runtime::RowsLoss{vl.loss * tokens,
                                     scaled({vl.loss.item<double>(), vl.clip_fraction}, tokens)};
          });
      runtime::UpdateInfo u = runtime::apply_gradients(ctx, critic);
      std::vector<double> m = runtime::dp_mean(ctx, sums.stats);
      stats.value_loss += m[0], stats.clip_fraction += m[1], stats.grad_norm += u.grad_norm;
      ++stats.updates;
    }
  }
  double n = double(std::max<int64_t>(stats.updates, 1));
  stats.value_loss /= n, stats.clip_fraction /= n, stats.grad_norm /= n;
  return stats;
}

SftStats sft_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& m,
                        const runtime::SequenceBatch& batch) {
  const double k = sum_scale(ctx, mask_tokens(batch));
  const runtime::LossSums sums = runtime::backward_loss(
      ctx, *m.model, {&batch}, runtime::HeadKindOut::kLogprobs, 0,
      [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
        return runtime::RowsLoss{-algo::masked_sum(out[0].logprobs, rows(batch.response_mask, r0, r1)) * k,
                                 {}};
      });
  runtime::UpdateInfo u = runtime::apply_gradients(ctx, m);
  return SftStats{runtime::dp_mean(ctx, {sums.loss})[0], u.grad_norm, u.lr};
}

namespace {

// One step of a loss over preference pairs (row i of `chosen` against row i of `rejected`), a mean over every
// dp rank's pairs: `pair_loss` gives the PairLoss of rows [r0, r1) from their outputs.
using PairLossOfRows =
    std::function<algo::PairLoss(const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1)>;
PairStats pair_train_step(const runtime::CallContext& ctx, runtime::TrainedModel& m,
                          const runtime::SequenceBatch& chosen, const runtime::SequenceBatch& rejected,
                          runtime::HeadKindOut what, const PairLossOfRows& pair_loss) {
  const double k = sum_scale(ctx, double(chosen.size()));
  const runtime::LossSums sums = runtime::backward_loss(
      ctx, *m.model, {&chosen, &rejected}, what, 3,
      [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
        const algo::PairLoss pl = pair_loss(out, r0, r1);
        const double pairs = k * double(r1 - r0);
        return runtime::RowsLoss{pl.loss * pairs,
                                 scaled({pl.loss.item<double>(), pl.accuracy, pl.margin}, pairs)};
      });
  runtime::UpdateInfo u = runtime::apply_gradients(ctx, m);
  std::vector<double> v = runtime::dp_mean(ctx, sums.stats);
  return PairStats{v[0], v[1], v[2], u.grad_norm};
}

}  // namespace

PairStats reward_model_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& m,
                                  const runtime::SequenceBatch& chosen,
                                  const runtime::SequenceBatch& rejected) {
  return pair_train_step(
      ctx, m, chosen, rejected, runtime::HeadKindOut::kValues,
      [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
        return algo::bradley_terry_loss(
            runtime::last_response_value(out[0].values, runtime::slice_rows(chosen, r0, r1)),
            runtime::last_response_value(out[1].values, runtime::slice_rows(rejected, r0, r1)));
      });
}

PairStats dpo_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& m,
                         const runtime::SequenceBatch& chosen, const runtime::SequenceBatch& rejected,
                         const at::Tensor& ref_chosen, const at::Tensor& ref_rejected, double beta,
                         double label_smoothing) {
  return pair_train_step(
      ctx, m, chosen, rejected, runtime::HeadKindOut::kLogprobs,
      [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
        return algo::dpo_loss(
            runtime::sum_over_response(out[0].logprobs, runtime::slice_rows(chosen, r0, r1)),
            runtime::sum_over_response(out[1].logprobs, runtime::slice_rows(rejected, r0, r1)),
            rows(ref_chosen, r0, r1), rows(ref_rejected, r0, r1), beta, label_smoothing);
      });
}

}  // namespace realign::train
