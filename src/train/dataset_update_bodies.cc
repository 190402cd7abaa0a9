// The update calls' bodies on dataset rows: SFT on prompt/response examples, and the reward model's
// Bradley-Terry and the policy's DPO updates on preference pairs.
#include <ATen/ATen.h>

#include "core/check.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Trainer::PreferenceBatches Trainer::preference_batches(const Mfc& m, const BatchRows& rows) const {
  const Range r = contiguous_rows(m.name, m.model, rows.n);
  std::vector<runtime::TokenIds> p, c, q;
  for (const auto& rec : pick(data_.preferences, rows.idx, r.begin, r.end)) {
    p.push_back(codec_.encode_prompt(rec.prompt));
    c.push_back(codec_.encode(rec.chosen));
    q.push_back(codec_.encode(rec.rejected));
  }
  return {runtime::make_sequence_batch(p, c, codec_.pad_id()),
          runtime::make_sequence_batch(p, q, codec_.pad_id())};
}

Trainer::Call Trainer::sft_update_body(const BodyInput& b) {
  const Mfc& m = b.m;
  const BatchRows& rows = b.it.rows;
  Json* stats = b.stats;
  return {m.name, m.model, [this, &m, &rows, stats](const runtime::CallContext& ctx, model::Transformer&) {
            const Range r = contiguous_rows(m.name, m.model, rows.n);
            std::vector<runtime::TokenIds> p, q;
            for (const auto& rec : pick(data_.sft, rows.idx, r.begin, r.end))
              p.push_back(codec_.encode_prompt(rec.prompt)), q.push_back(codec_.encode(rec.response));
            const SftStats st =
                sft_train_call(ctx, trained(m.model), runtime::make_sequence_batch(p, q, codec_.pad_id()));
            *stats =
                Json{{"loss/sft", st.loss}, {"grad_norm/" + to_string(m.model), st.grad_norm}, {"lr", st.lr}};
          }};
}

Trainer::Call Trainer::pair_score_update_body(const BodyInput& b) {
  const Mfc& m = b.m;
  const BatchRows& rows = b.it.rows;
  Json* stats = b.stats;
  return {m.name, m.model, [this, &m, &rows, stats](const runtime::CallContext& ctx, model::Transformer&) {
            const PreferenceBatches pairs = preference_batches(m, rows);
            const PairStats st = reward_model_train_call(ctx, trained(m.model), pairs.chosen, pairs.rejected);
            *stats = Json{{"loss/reward_model", st.loss},
                          {"rm/accuracy", st.accuracy},
                          {"rm/margin", st.margin},
                          {"grad_norm/" + to_string(m.model), st.grad_norm}};
          }};
}

Trainer::Call Trainer::dpo_update_body(const BodyInput& b) {
  const Mfc& m = b.m;
  const BatchRows& rows = b.it.rows;
  const runtime::Rows& in = b.in;
  Json* stats = b.stats;
  return {
      m.name, m.model, [this, &m, &rows, &in, stats](const runtime::CallContext& ctx, model::Transformer&) {
        // The reference's summed log-probs of each pair, as the pair_logprobs call that produced them wrote.
        auto reference = [&](const std::string& side) {
          for (const std::string& d : m.inputs) {
            auto f = in.find(d + "/" + side);
            if (f != in.end()) return f->second;
          }
          REALIGN_CHECK(false) << m.name << " received no reference log-probs of the " << side
                               << " responses";
          return at::Tensor();
        };
        const PreferenceBatches pairs = preference_batches(m, rows);
        const PairStats st =
            dpo_train_call(ctx, trained(m.model), pairs.chosen, pairs.rejected, reference("chosen"),
                           reference("rejected"), train_config_.dpo_beta, train_config_.dpo_label_smoothing);
        *stats = Json{{"loss/dpo", st.loss},
                      {"dpo/accuracy", st.accuracy},
                      {"dpo/margin", st.margin},
                      {"grad_norm/" + to_string(m.model), st.grad_norm}};
      }};
}

}  // namespace realign::train
