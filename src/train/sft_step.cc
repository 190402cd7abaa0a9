// One SFT step: the actor trained on a sample of prompt/response pairs; and what the SFT, reward-model and
// DPO steps share (detail/trainer_impl.h).
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Json Trainer::train_call_stats(const std::string& call, const std::string& role,
                               const std::function<Json(const runtime::CallContext&)>& body) {
  Json stats;
  run_call(call, role, [&](const runtime::CallContext& ctx, model::Transformer&) { stats = body(ctx); });
  return broadcast_call_stats(call, role, stats);
}

Trainer::PreferenceBatches Trainer::preference_batches(const std::vector<int64_t>& idx,
                                                       const Range& r) const {
  std::vector<runtime::TokenIds> p, c, q;
  for (const auto& rec : pick(data_.preferences, idx, r.begin, r.end)) {
    p.push_back(codec_.encode_prompt(rec.prompt));
    c.push_back(codec_.encode(rec.chosen));
    q.push_back(codec_.encode(rec.rejected));
  }
  return {runtime::make_sequence_batch(p, c, codec_.pad_id()),
          runtime::make_sequence_batch(p, q, codec_.pad_id())};
}

Json Trainer::sft_step(int64_t) {
  const int64_t n = stage_batch("sft", train_config_.sft_stage.batch);
  std::vector<int64_t> idx = sft_sampler_->next(n);
  return train_call_stats("actor_train", "actor", [&](const runtime::CallContext& ctx) {
    const Range r = contiguous_rows("actor_train", "actor", n);
    std::vector<runtime::TokenIds> p, q;
    for (const auto& rec : pick(data_.sft, idx, r.begin, r.end))
      p.push_back(codec_.encode_prompt(rec.prompt)), q.push_back(codec_.encode(rec.response));
    const SftStats st = sft_train_call(ctx, *actor_, runtime::make_sequence_batch(p, q, codec_.pad_id()));
    return Json{{"loss/sft", st.loss}, {"grad_norm/actor", st.grad_norm}, {"lr", st.lr}};
  });
}

}  // namespace realign::train
