// One reward-model step: the reward model trained on a sample of preference pairs (Bradley-Terry).
#include "train/detail/trainer_impl.h"

namespace realign::train {

Json Trainer::rm_step(int64_t) {
  const int64_t n = stage_batch("rm", train_config_.reward_model_stage.batch);
  std::vector<int64_t> idx = pref_sampler_->next(n);
  return train_call_stats("reward_train", "reward", [&](const runtime::CallContext& ctx) {
    const PreferenceBatches b = preference_batches(idx, contiguous_rows("reward_train", "reward", n));
    const PairStats st = reward_model_train_call(ctx, *reward_, b.chosen, b.rejected);
    return Json{{"loss/reward_model", st.loss},
                {"rm/accuracy", st.accuracy},
                {"rm/margin", st.margin},
                {"grad_norm/reward", st.grad_norm}};
  });
}

}  // namespace realign::train
