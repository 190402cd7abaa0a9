// The rows of an RL step moving between its calls: each call's rows stay on its own ranks, and every call
// gets its inputs straight from the ranks of the calls that produced them (CallPlacement::move_rows), the
// inputs of calls that run together in one exchange.
#include <ATen/ATen.h>

#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::runtime {

std::vector<TokenIds> Trainer::prompts_of(const RlRows& rows, const std::vector<int64_t>& index) const {
  std::vector<TokenIds> out;
  for (int64_t i : index) out.push_back(codec_.encode_prompt(record_of(rows, i).prompt));
  return out;
}

std::vector<int64_t> Trainer::rows_of(const std::string& call, const std::string& role, int64_t n,
                                      int64_t segments) const {
  std::vector<int64_t> out;
  for (const Range& r : segment_shares(n, place_->layout_of(call, role), rank(), segments))
    for (int64_t i = r.begin; i < r.end; ++i) out.push_back(i);
  return out;
}

at::Tensor Trainer::stop_penalised(const at::Tensor& scores, const std::vector<TokenIds>& responses) const {
  const double penalty = t_.ppo.missing_stop_penalty;
  if (penalty <= 0) return scores;
  return scores - missing_stop_penalties(responses, codec_.stop_tokens(), penalty);
}

std::vector<Trainer::Produced> Trainer::generate(const RlRows& rows, const std::vector<Generation>& calls) {
  const int64_t n = rows.n;
  std::vector<Produced> produced;
  for (const Generation& g : calls) produced.push_back({g.call, place_->layout_of(g.call, "actor"), {}});
  std::vector<Call> runs;
  for (size_t k = 0; k < calls.size(); ++k)
    runs.push_back(
        {calls[k].call, "actor", [&, k](const CallContext& ctx, model::Transformer& m) {
           const Range r = rows_in(calls[k].call, "actor", n);
           SamplingOptions o = calls[k].options;
           for (int64_t i = r.begin; i < r.end; ++i)
             o.row_seeds.push_back(mix_seed(calls[k].options.seed, uint64_t(i), 1));
           const std::vector<TokenIds> p = prompts_of(rows, range_indices(r));
           const bool keep = !calls[k].logprobs_field.empty();
           at::Tensor logprobs;
           produced[k].rows =
               token_rows("response", p.empty() ? std::vector<TokenIds>{}
                                                : generate_call(ctx, m, p, o, keep ? &logprobs : nullptr));
           if (keep)
             produced[k].rows[calls[k].logprobs_field] = p.empty() ? at::zeros({0, 0}, at::kFloat) : logprobs;
         }});
  run_together(runs);
  // Rule rewards are scored where the responses are: once per row, by the first tp and pp rank of each of the
  // generation's dp groups, then sent to the group's other ranks (every rank of a dp group holds its rows).
  for (size_t k = 0; k < calls.size(); ++k) {
    if (calls[k].score_field.empty()) continue;
    const std::optional<CallContext> ctx = place_->context(calls[k].call, produced[k].layout);
    if (!ctx) continue;
    const Range r = rows_in(calls[k].call, "actor", n);
    at::Tensor score = at::zeros({r.size()}, at::kFloat);
    if (r.size() > 0) {
      if (ctx->tp->rank() == 0 && ctx->pp->rank() == 0) {
        const std::vector<TokenIds> responses = token_lists(produced[k].rows, "response");
        std::vector<data::PromptRecord> records;
        std::vector<std::string> texts;
        for (int64_t i = r.begin; i < r.end; ++i) {
          records.push_back(record_of(rows, i));
          texts.push_back(codec_.decode(responses[size_t(i - r.begin)]));
        }
        score = stop_penalised(
            at::tensor(rule_rewards(in_.sections.reward, records, texts), at::kDouble).to(at::kFloat),
            responses);
      }
      ctx->tp->broadcast(score, 0);
      ctx->pp->broadcast(score, 0);
    }
    produced[k].rows[calls[k].score_field] = score;
  }
  return produced;
}

std::vector<Rows> Trainer::bring_inputs(int64_t n, const std::vector<Consumer>& consumers) {
  std::vector<CallPlacement::RowsMove> moves;
  std::vector<size_t> owner;
  for (size_t c = 0; c < consumers.size(); ++c) {
    const Consumer& to = consumers[c];
    for (const Input& in : to.inputs) {
      Rows fields;
      for (const std::string& f : in.fields) {
        auto it = in.from->rows.find(f);
        if (it != in.from->rows.end()) fields[f] = it->second;
      }
      moves.push_back(
          {to.call, in.from->layout, place_->layout_of(to.call, to.role), n, fields, to.segments});
      owner.push_back(c);
    }
  }
  const std::vector<Rows> got = place_->move_rows(moves);
  std::vector<Rows> out(consumers.size());
  for (size_t k = 0; k < got.size(); ++k)
    for (const auto& [field, tensor] : got[k]) out[owner[k]][field] = tensor;
  return out;
}

std::vector<Trainer::Produced> Trainer::infer(const RlRows& rows, const std::vector<Inference>& calls) {
  const int64_t n = rows.n;
  std::vector<Consumer> consumers;
  for (const Inference& c : calls)
    consumers.push_back({c.call, c.role, {{c.input, {"response", "response_len"}}}, 1});
  const std::vector<Rows> in = bring_inputs(n, consumers);
  std::vector<Produced> out;
  for (const Inference& c : calls) out.push_back({c.call, place_->layout_of(c.call, c.role), {}});
  std::vector<Call> runs;
  for (size_t k = 0; k < calls.size(); ++k)
    runs.push_back({calls[k].call, calls[k].role, [&, k](const CallContext& ctx, model::Transformer& m) {
                      const std::vector<TokenIds> r = token_lists(in[k], "response");
                      if (r.empty()) return;
                      const SequenceBatch b = make_sequence_batch(
                          prompts_of(rows, range_indices(rows_in(calls[k].call, calls[k].role, n))), r,
                          codec_.pad_id());
                      const at::Tensor y = calls[k].fn(ctx, m, b);
                      out[k].rows[calls[k].field] = calls[k].score ? stop_penalised(y, r) : y;
                    }});
  run_together(runs);
  return out;
}

}  // namespace realign::runtime
