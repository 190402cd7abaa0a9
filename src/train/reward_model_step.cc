// One reward-model step: the reward model trained on a sample of preference pairs (Bradley-Terry).
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Json Trainer::rm_step(int64_t) {
  int64_t n = algorithm_ == "rm" ? input_.algorithm.batch.prompts : train_config_.reward_model_stage.batch;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  Json stats;
  run_call("reward_train", "reward", [&](const runtime::CallContext& ctx, model::Transformer&) {
    const Range r = contiguous_rows("reward_train", "reward", n);
    std::vector<runtime::TokenIds> p, c, q;
    for (const auto& rec : pick(data_.preferences, idx, r.begin, r.end)) {
      p.push_back(codec_.encode_prompt(rec.prompt));
      c.push_back(codec_.encode(rec.chosen));
      q.push_back(codec_.encode(rec.rejected));
    }
    const PairStats st =
        reward_model_train_call(ctx, *reward_, runtime::make_sequence_batch(p, c, codec_.pad_id()),
                                runtime::make_sequence_batch(p, q, codec_.pad_id()));
    stats = Json{{"loss/reward_model", st.loss},
                 {"rm/accuracy", st.accuracy},
                 {"rm/margin", st.margin},
                 {"grad_norm/reward", st.grad_norm}};
  });
  return broadcast_call_stats("reward_train", "reward", stats);
}

}  // namespace realign::train
