// The inference calls' bodies: one forward pass over the iteration's responses (per-token log-probs,
// per-token values, a score per response), or over each preference pair (its two summed log-probs), written
// on the call's ranks as the fields the graph's data travels in.
#include <ATen/ATen.h>

#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"
#include "train/inference_calls.h"

namespace realign::train {

Trainer::Call Trainer::response_forward_body(const BodyInput& b, ResponseForward forward) {
  const Mfc& m = b.m;
  Iteration& it = b.it;
  const runtime::Rows& in = b.in;
  const std::string field = output_fields(m)[0];
  Produced& out = it.produced.at(m.name);
  return {
      m.name, m.model,
      [this, &m, &it, &in, &out, field, forward](const runtime::CallContext& ctx, model::Transformer& model) {
        const std::vector<runtime::TokenIds> r = token_lists(in, "response");
        if (r.empty()) return;
        const runtime::SequenceBatch batch = runtime::make_sequence_batch(
            prompts_of(it.rows, range_indices(contiguous_rows(m.name, m.model, it.rows.n))), r,
            codec_.pad_id());
        out.rows[field] = forward(ctx, model, batch, r);
      }};
}

Trainer::Call Trainer::token_logprobs_body(const BodyInput& b) {
  return response_forward_body(
      b, [](const runtime::CallContext& ctx, model::Transformer& model, const runtime::SequenceBatch& batch,
            const std::vector<runtime::TokenIds>&) { return logprobs_call(ctx, model, batch); });
}

Trainer::Call Trainer::token_values_body(const BodyInput& b) {
  return response_forward_body(
      b, [](const runtime::CallContext& ctx, model::Transformer& model, const runtime::SequenceBatch& batch,
            const std::vector<runtime::TokenIds>&) { return values_call(ctx, model, batch); });
}

Trainer::Call Trainer::sequence_scores_body(const BodyInput& b) {
  return response_forward_body(
      b, [this](const runtime::CallContext& ctx, model::Transformer& model,
                const runtime::SequenceBatch& batch, const std::vector<runtime::TokenIds>& responses) {
        return stop_penalised(scores_call(ctx, model, batch), responses);
      });
}

Trainer::Call Trainer::pair_logprobs_body(const BodyInput& b) {
  const Mfc& m = b.m;
  Iteration& it = b.it;
  const std::vector<std::string> fields = output_fields(m);  // chosen, rejected
  Produced& out = it.produced.at(m.name);
  return {m.name, m.model,
          [this, &m, &it, &out, fields](const runtime::CallContext& ctx, model::Transformer& model) {
            const PreferenceBatches pairs = preference_batches(m, it.rows);
            out.rows[fields[0]] =
                runtime::sum_over_response(logprobs_call(ctx, model, pairs.chosen), pairs.chosen);
            out.rows[fields[1]] =
                runtime::sum_over_response(logprobs_call(ctx, model, pairs.rejected), pairs.rejected);
          }};
}

}  // namespace realign::train
