#include "train/train_calls.h"

#include <ATen/ATen.h>

#include <functional>
#include <tuple>
#include <utility>

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

// The figures a loss reports, by name. backward_loss sums them as a vector (runtime/call_forward.h), in the
// order fields() lists them; as_stats and from_stats convert at that boundary only.
struct PolicyFigures {
  double policy_loss = 0, kl_loss = 0, entropy = 0, clip_fraction = 0, approx_kl = 0;
  auto fields() { return std::tie(policy_loss, kl_loss, entropy, clip_fraction, approx_kl); }
};
struct ValueFigures {
  double value_loss = 0, clip_fraction = 0;
  auto fields() { return std::tie(value_loss, clip_fraction); }
};
struct PairFigures {
  double loss = 0, accuracy = 0, margin = 0;
  auto fields() { return std::tie(loss, accuracy, margin); }
};

template <class Figures>
constexpr size_t field_count() {
  return std::tuple_size_v<decltype(std::declval<Figures&>().fields())>;
}

// The figures as backward_loss's stats, each times k (a mean times its item count is a sum).
template <class Figures>
std::vector<double> as_stats(Figures f, double k) {
  std::vector<double> v;
  std::apply([&](auto&... x) { (v.push_back(x * k), ...); }, f.fields());
  return v;
}

template <class Figures>
Figures from_stats(const std::vector<double>& v) {
  REALIGN_CHECK(v.size() == field_count<Figures>()) << v.size() << " stats, not " << field_count<Figures>();
  Figures f;
  size_t i = 0;
  std::apply([&](auto&... x) { ((x = v[i++]), ...); }, f.fields());
  return f;
}

// A PPO-family update's result: each figure and the gradient norm averaged over its optimizer steps, the
// number of steps, and the last step's learning rate.
template <class Figures>
struct UpdateMeans {
  Figures figures;
  double grad_norm = 0, lr = 0;
  int64_t updates = 0;
  bool early_stopped = false;
};

// The token-mean loss of rows [begin, end) of the whole batch, with its figures, from those rows' head
// outputs and response mask.
template <class Figures>
using TokenLossOfRows = std::function<std::pair<at::Tensor, Figures>(
    const runtime::HeadOutputs& out, const at::Tensor& mask, int64_t begin, int64_t end)>;

// The update loop the actor and the critic share: `epochs` passes over the batch's mini-batches (this rank's
// shares of them, in order), one optimizer step each, the loss a mean over the mini-batch's tokens on every
// dp rank. `stop` (when set) ends the update after a step whose dp-mean figures it accepts.
template <class Figures>
UpdateMeans<Figures> ppo_update(const runtime::CallContext& ctx, runtime::TrainedModel& model,
                                const runtime::SequenceBatch& seqs, runtime::WantedOutputs what,
                                int64_t epochs, int64_t mini_batches,
                                const TokenLossOfRows<Figures>& token_loss,
                                const std::function<bool(const Figures&)>& stop = nullptr) {
  UpdateMeans<Figures> result;
  std::vector<double> figure_sums(field_count<Figures>(), 0.0);
  const auto bounds = mini_batch_bounds(ctx, seqs.size(), mini_batches);
  for (int64_t epoch = 0; epoch < epochs && !result.early_stopped; ++epoch) {
    for (auto [b0, b1] : bounds) {
      runtime::SequenceBatch mb = runtime::slice_rows(seqs, b0, b1);
      const double k = sum_scale(ctx, mask_tokens(mb));
      // Per micro-batch (rows [r0, r1) of the mini-batch): token means times its token count, i.e. sums.
      const runtime::LossSums sums =
          runtime::backward_loss(ctx, *model.model, {&mb}, what, field_count<Figures>(),
                                 [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
                                   const at::Tensor mask = rows(mb.response_mask, r0, r1);
                                   const double tokens = k * mask.sum().item<double>();
                                   const auto [loss, figures] = token_loss(out[0], mask, b0 + r0, b0 + r1);
                                   return runtime::RowsLoss{loss * tokens, as_stats(figures, tokens)};
                                 });
      const runtime::UpdateInfo u = runtime::apply_gradients(ctx, model);
      const std::vector<double> step = runtime::dp_mean(ctx, sums.stats);
      for (size_t i = 0; i < step.size(); ++i) figure_sums[i] += step[i];
      result.grad_norm += u.grad_norm, result.lr = u.lr;
      ++result.updates;
      if (stop && stop(from_stats<Figures>(step))) {
        result.early_stopped = true;
        break;
      }
    }
  }
  const double n = double(std::max<int64_t>(result.updates, 1));
  for (double& x : figure_sums) x /= n;
  result.figures = from_stats<Figures>(figure_sums);
  result.grad_norm /= n;
  return result;
}

}  // namespace

int64_t mini_batch_count(int64_t rows, int64_t mini_batches) {
  return std::max<int64_t>(1, std::min(mini_batches, rows));
}

ActorStats actor_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& actor,
                            const PpoBatch& batch, const ActorOptions& o) {
  const UpdateMeans<PolicyFigures> u = ppo_update<PolicyFigures>(
      ctx, actor, batch.seqs, runtime::WantedOutputs::kLogprobsEntropy, o.epochs, o.mini_batches,
      [&](const runtime::HeadOutputs& out, const at::Tensor& mask, int64_t begin, int64_t end) {
        const algo::PolicyLoss pl =
            algo::ppo_policy_loss(out.logprobs, rows(batch.old_logprobs, begin, end),
                                  rows(batch.advantages, begin, end), mask, o.clip_eps, o.clip_eps);
        at::Tensor loss = pl.loss;
        const at::Tensor ent = algo::masked_mean(out.entropy, mask);
        double kl_loss = 0;
        if (o.kl_loss_coef > 0) {
          const at::Tensor kl = algo::masked_mean(
              algo::kl_per_token(out.logprobs, rows(batch.ref_logprobs, begin, end), o.kl_estimator), mask);
          loss = loss + o.kl_loss_coef * kl;
          kl_loss = kl.item<double>();
        }
        if (o.entropy_coef != 0) loss = loss - o.entropy_coef * ent;
        return std::pair{loss, PolicyFigures{pl.loss.item<double>(), kl_loss, ent.item<double>(),
                                             pl.clip_fraction, pl.approx_kl}};
      },
      [&](const PolicyFigures& step) { return o.early_stop_kl > 0 && step.approx_kl > o.early_stop_kl; });
  const PolicyFigures& f = u.figures;
  return ActorStats{f.policy_loss, f.kl_loss, f.entropy, f.clip_fraction, f.approx_kl,
                    u.grad_norm,   u.lr,      u.updates, u.early_stopped};
}

CriticStats critic_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& critic,
                              const PpoBatch& batch, double value_clip, int64_t epochs,
                              int64_t mini_batches) {
  const UpdateMeans<ValueFigures> u = ppo_update<ValueFigures>(
      ctx, critic, batch.seqs, runtime::WantedOutputs::kValues, epochs, mini_batches,
      [&](const runtime::HeadOutputs& out, const at::Tensor& mask, int64_t begin, int64_t end) {
        const algo::ValueLoss vl = algo::ppo_value_loss(out.values, rows(batch.old_values, begin, end),
                                                        rows(batch.returns, begin, end), mask, value_clip);
        return std::pair{vl.loss, ValueFigures{vl.loss.item<double>(), vl.clip_fraction}};
      });
  return CriticStats{u.figures.value_loss, u.figures.clip_fraction, u.grad_norm, u.updates};
}

SftStats sft_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& m,
                        const runtime::SequenceBatch& batch) {
  const double k = sum_scale(ctx, mask_tokens(batch));
  const runtime::LossSums sums = runtime::backward_loss(
      ctx, *m.model, {&batch}, runtime::WantedOutputs::kLogprobs, 0,
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
                          runtime::WantedOutputs what, const PairLossOfRows& pair_loss) {
  const double k = sum_scale(ctx, double(chosen.size()));
  const runtime::LossSums sums = runtime::backward_loss(
      ctx, *m.model, {&chosen, &rejected}, what, field_count<PairFigures>(),
      [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
        const algo::PairLoss pl = pair_loss(out, r0, r1);
        const double pairs = k * double(r1 - r0);
        return runtime::RowsLoss{
            pl.loss * pairs, as_stats(PairFigures{pl.loss.item<double>(), pl.accuracy, pl.margin}, pairs)};
      });
  runtime::UpdateInfo u = runtime::apply_gradients(ctx, m);
  const PairFigures f = from_stats<PairFigures>(runtime::dp_mean(ctx, sums.stats));
  return PairStats{f.loss, f.accuracy, f.margin, u.grad_norm};
}

}  // namespace

PairStats reward_model_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& m,
                                  const runtime::SequenceBatch& chosen,
                                  const runtime::SequenceBatch& rejected) {
  return pair_train_step(
      ctx, m, chosen, rejected, runtime::WantedOutputs::kValues,
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
      ctx, m, chosen, rejected, runtime::WantedOutputs::kLogprobs,
      [&](const std::vector<runtime::HeadOutputs>& out, int64_t r0, int64_t r1) {
        return algo::dpo_loss(
            runtime::sum_over_response(out[0].logprobs, runtime::slice_rows(chosen, r0, r1)),
            runtime::sum_over_response(out[1].logprobs, runtime::slice_rows(rejected, r0, r1)),
            rows(ref_chosen, r0, r1), rows(ref_rejected, r0, r1), beta, label_smoothing);
      });
}

}  // namespace realign::train
