// One SFT step: the actor trained on a sample of prompt/response pairs.
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Json Trainer::sft_step(int64_t) {
  int64_t n = algorithm_ == "sft" ? input_.algorithm.batch.prompts : train_config_.sft_stage.batch;
  std::vector<int64_t> idx = sft_sampler_->next(n);
  Json stats;
  run_call("actor_train", "actor", [&](const runtime::CallContext& ctx, model::Transformer&) {
    const Range r = contiguous_rows("actor_train", "actor", n);
    std::vector<runtime::TokenIds> p, q;
    for (const auto& rec : pick(data_.sft, idx, r.begin, r.end))
      p.push_back(codec_.encode_prompt(rec.prompt)), q.push_back(codec_.encode(rec.response));
    const SftStats st = sft_train_call(ctx, *actor_, runtime::make_sequence_batch(p, q, codec_.pad_id()));
    stats = Json{{"loss/sft", st.loss}, {"grad_norm/actor", st.grad_norm}, {"lr", st.lr}};
  });
  return broadcast_call_stats("actor_train", "actor", stats);
}

}  // namespace realign::train
