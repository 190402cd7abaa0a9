// One DPO step: the reference's log-probs of each preference pair, then the actor's DPO update.
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"
#include "train/inference_calls.h"

namespace realign::train {

namespace {

// Preference rows [r.begin, r.end) of this step's sample: prompts with chosen and rejected responses.
struct PreferenceRows {
  runtime::SequenceBatch chosen, rejected;
};

}  // namespace

Json Trainer::dpo_step(int64_t) {
  int64_t n = input_.algorithm.batch.prompts;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  auto pairs = [&](const Range& r) {
    std::vector<runtime::TokenIds> p, c, q;
    for (const auto& rec : pick(data_.preferences, idx, r.begin, r.end)) {
      p.push_back(codec_.encode_prompt(rec.prompt));
      c.push_back(codec_.encode(rec.chosen));
      q.push_back(codec_.encode(rec.rejected));
    }
    return PreferenceRows{runtime::make_sequence_batch(p, c, codec_.pad_id()),
                          runtime::make_sequence_batch(p, q, codec_.pad_id())};
  };
  // The reference's summed log-probs, computed on its layout and moved from there to the policy's.
  Produced ref{"ref_inf", place_->layout_of("ref_inf", "ref"), {}};
  run_call("ref_inf", "ref", [&](const runtime::CallContext& ctx, model::Transformer& m) {
    const PreferenceRows b = pairs(contiguous_rows("ref_inf", "ref", n));
    ref.rows["chosen"] = runtime::sum_over_response(logprobs_call(ctx, m, b.chosen), b.chosen);
    ref.rows["rejected"] = runtime::sum_over_response(logprobs_call(ctx, m, b.rejected), b.rejected);
  });
  const runtime::Rows on_policy =
      bring_inputs(n, {{"actor_train", "actor", {{&ref, {"chosen", "rejected"}}}, 1}})[0];
  Json stats;
  run_call("actor_train", "actor", [&](const runtime::CallContext& ctx, model::Transformer&) {
    const PreferenceRows b = pairs(contiguous_rows("actor_train", "actor", n));
    const PairStats st =
        dpo_train_call(ctx, *actor_, b.chosen, b.rejected, on_policy.at("chosen"), on_policy.at("rejected"),
                       train_config_.dpo_beta, train_config_.dpo_label_smoothing);
    stats = Json{{"loss/dpo", st.loss},
                 {"dpo/accuracy", st.accuracy},
                 {"dpo/margin", st.margin},
                 {"grad_norm/actor", st.grad_norm}};
  });
  return broadcast_call_stats("actor_train", "actor", stats);
}

}  // namespace realign::train
