// One DPO step: the reference's log-probs of each preference pair, then the actor's DPO update.
#include "train/detail/trainer_impl.h"
#include "train/inference_calls.h"

namespace realign::train {

Json Trainer::dpo_step(int64_t) {
  int64_t n = input_.algorithm.batch.prompts;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  // The reference's summed log-probs, computed on its layout and moved from there to the policy's.
  Produced ref{"ref_inf", place_->layout_of("ref_inf", "ref"), {}};
  run_call("ref_inf", "ref", [&](const runtime::CallContext& ctx, model::Transformer& m) {
    const PreferenceBatches b = preference_batches(idx, contiguous_rows("ref_inf", "ref", n));
    ref.rows["chosen"] = runtime::sum_over_response(logprobs_call(ctx, m, b.chosen), b.chosen);
    ref.rows["rejected"] = runtime::sum_over_response(logprobs_call(ctx, m, b.rejected), b.rejected);
  });
  const runtime::Rows on_policy =
      bring_inputs(n, {{"actor_train", "actor", {{&ref, {"chosen", "rejected"}}}, 1}})[0];
  return train_call_stats("actor_train", "actor", [&](const runtime::CallContext& ctx) {
    const PreferenceBatches b = preference_batches(idx, contiguous_rows("actor_train", "actor", n));
    const PairStats st =
        dpo_train_call(ctx, *actor_, b.chosen, b.rejected, on_policy.at("chosen"), on_policy.at("rejected"),
                       train_config_.dpo_beta, train_config_.dpo_label_smoothing);
    return Json{{"loss/dpo", st.loss},
                {"dpo/accuracy", st.accuracy},
                {"dpo/margin", st.margin},
                {"grad_norm/actor", st.grad_norm}};
  });
}

}  // namespace realign::train
