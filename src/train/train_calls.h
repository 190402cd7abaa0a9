// Training calls, each a function of (call context, trained model, batch) -> statistics: the PPO-family actor
// update (PPO, GRPO and ReMax differ only in the advantages they pass), the critic update, SFT, reward-model
// training (Bradley-Terry) and DPO. Gradients are averaged over ctx.dp and clipped over every shard. Any
// (dp, tp, pp): with pp > 1 the update runs through the pipeline (runtime/call_forward.h: every rank of a dp
// group's tp/pp ranks passes the same batch); the stats are equal on every rank of the call.
//
// Updates do not depend on the dp degree or the micro-batches: losses are means over the tokens (or pairs) of
// the whole batch (dp_weight), written as sums over rows so that micro-batches accumulate the whole batch's
// gradient (call_forward.h), and a PPO mini-batch is a segment of the whole batch, of which each dp rank
// holds its share (realloc/data_plan.h segment_shares: the rows a rank passes are its shares of
// mini_batch_count segments, in order).
#pragma once

#include <ATen/core/Tensor.h>

#include "algo/kl.h"
#include "runtime/sequence_batch.h"
#include "runtime/trained_model.h"
#include "train/train_config.h"

namespace realign::train {

// What the actor and critic updates read, all (B, T) fp32 aligned with seqs.response_mask.
struct PpoBatch {
  runtime::SequenceBatch seqs;
  at::Tensor old_logprobs, ref_logprobs;       // the behaviour policy and the reference
  at::Tensor advantages, returns, old_values;  // returns / old_values: PPO with a critic only
};

// Mini-batches of a batch of `rows` rows: `mini_batches` clamped to [1, rows].
int64_t mini_batch_count(int64_t rows, int64_t mini_batches);

struct ActorOptions {
  double clip_eps = 0.2;
  double kl_loss_coef = 0;  // > 0: KL to the reference as a loss term (GRPO), with `kl_estimator`
  algo::KlEstimator kl_estimator = algo::KlEstimator::kK3;
  double entropy_coef = 0;
  double early_stop_kl = 0;  // > 0: stop when an update's approx KL (mean over dp) exceeds it
  int64_t epochs = 1, mini_batches = 1;
};

struct ActorStats {
  double policy_loss = 0, kl_loss = 0, entropy = 0, clip_fraction = 0, approx_kl = 0, grad_norm = 0, lr = 0;
  int64_t updates = 0;
  bool early_stopped = false;
};
ActorStats actor_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& actor,
                            const PpoBatch& batch, const ActorOptions& options);

struct CriticStats {
  double value_loss = 0, clip_fraction = 0, grad_norm = 0;
  int64_t updates = 0;
};
CriticStats critic_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& critic,
                              const PpoBatch& batch, double value_clip, int64_t epochs, int64_t mini_batches);

struct SftStats {
  double loss = 0, grad_norm = 0, lr = 0;
};
// One step of next-token cross-entropy on the response tokens only (prompt tokens masked).
SftStats sft_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& model,
                        const runtime::SequenceBatch& batch);

struct PairStats {
  double loss = 0, accuracy = 0, margin = 0, grad_norm = 0;
};
// One Bradley-Terry step: the reward model's score of chosen row i should exceed that of rejected row i.
PairStats reward_model_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& model,
                                  const runtime::SequenceBatch& chosen,
                                  const runtime::SequenceBatch& rejected);
// One DPO step; ref_*_logps (P) are the reference's summed response log-probs.
PairStats dpo_train_call(const runtime::CallContext& ctx, runtime::TrainedModel& policy,
                         const runtime::SequenceBatch& chosen, const runtime::SequenceBatch& rejected,
                         const at::Tensor& ref_chosen_logps, const at::Tensor& ref_rejected_logps,
                         double beta, double label_smoothing);

}  // namespace realign::train
