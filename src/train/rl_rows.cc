// The rows of an RL step moving between its calls' layouts: generation, inference calls run together, and
// the batch brought to a train call's layout.
#include <ATen/ATen.h>

#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::runtime {

std::vector<TokenIds> Trainer::prompts_of(const RlRows& rows, const Range& r) const {
  std::vector<TokenIds> out;
  for (int64_t i = r.begin; i < r.end; ++i) out.push_back(codec_.encode_prompt(record_of(rows, i).prompt));
  return out;
}

std::vector<std::vector<TokenIds>> Trainer::generate(
    const RlRows& rows, const std::vector<std::pair<std::string, SamplingOptions>>& calls) {
  const int64_t n = rows.n;
  std::vector<Rows> produced(calls.size());
  std::vector<Call> runs;
  for (size_t k = 0; k < calls.size(); ++k)
    runs.push_back({calls[k].first, "actor", [&, k](const CallContext& ctx, model::Transformer& m) {
                      const auto& [call, options] = calls[k];
                      const Range r = rows_in(call, "actor", n);
                      SamplingOptions o = options;
                      for (int64_t i = r.begin; i < r.end; ++i)
                        o.row_seeds.push_back(mix_seed(options.seed, uint64_t(i), 1));
                      const std::vector<TokenIds> p = prompts_of(rows, r);
                      produced[k] = token_rows(
                          "response", p.empty() ? std::vector<TokenIds>{} : generate_call(ctx, m, p, o));
                    }});
  run_together(runs);
  std::vector<std::vector<TokenIds>> out;
  for (size_t k = 0; k < calls.size(); ++k)
    out.push_back(token_lists(
        place_->rows_from(calls[k].first, place_->layout_of(calls[k].first, "actor"), n, produced[k]),
        "response"));
  return out;
}

std::map<std::string, at::Tensor> Trainer::infer(const RlRows& rows, const std::vector<Inference>& calls,
                                                 int64_t T) {
  const int64_t n = rows.n;
  std::vector<Rows> in, out(calls.size());
  for (const Inference& c : calls)
    in.push_back(
        place_->rows_to(c.call, place_->layout_of(c.call, c.role), n, token_rows("response", *c.responses)));
  std::vector<Call> runs;
  for (size_t k = 0; k < calls.size(); ++k)
    runs.push_back({calls[k].call, calls[k].role, [&, k](const CallContext& ctx, model::Transformer& m) {
                      const std::vector<TokenIds> r = token_lists(in[k], "response");
                      if (r.empty()) return;
                      const SequenceBatch b = make_sequence_batch(
                          prompts_of(rows, rows_in(calls[k].call, calls[k].role, n)), r, codec_.pad_id());
                      out[k]["y"] = calls[k].fn(ctx, m, b);
                    }});
  run_together(runs);
  std::map<std::string, at::Tensor> ys;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Layout layout = place_->layout_of(calls[k].call, calls[k].role);
    ys[calls[k].call] = fit_columns(place_->rows_from(calls[k].call, layout, n, out[k]).at("y"), T);
  }
  return ys;
}

PpoBatch Trainer::train_batch(const RlRows& rows, const std::string& call, const std::string& role,
                              const std::vector<TokenIds>& responses, const PpoBatch& batch) {
  const int64_t n = rows.n;
  const Range mine = samples_of(n, place_->batch_layout(), rank());
  Rows fields = token_rows("response", responses);
  fields["index"] = at::arange(mine.begin, mine.end, at::kLong);
  fields["old_logprobs"] = batch.old_logprobs;
  fields["ref_logprobs"] = batch.ref_logprobs;
  fields["advantages"] = batch.advantages;
  if (batch.returns.defined()) fields["returns"] = batch.returns, fields["old_values"] = batch.old_values;
  const Layout layout = place_->layout_of(call, role);
  const Rows got =
      place_->rows_to(call, layout, n, fields, mini_batch_count(n, in_.algorithm.batch.mini_batches));
  PpoBatch b;
  if (!layout.contains(rank())) return b;  // the call runs elsewhere
  std::vector<TokenIds> p;
  if (got.count("index")) {
    const at::Tensor index = got.at("index").contiguous();
    for (int64_t k = 0; k < index.size(0); ++k)
      p.push_back(codec_.encode_prompt(record_of(rows, index[k].item<int64_t>()).prompt));
  }
  b.seqs = make_sequence_batch(p, token_lists(got, "response"), codec_.pad_id());
  const int64_t t = b.seqs.batch.tokens.size(1);
  auto field = [&](const char* name) {
    return got.count(name) ? fit_columns(got.at(name), t) : at::Tensor();
  };
  b.old_logprobs = field("old_logprobs");
  b.ref_logprobs = field("ref_logprobs");
  b.advantages = field("advantages");
  b.returns = field("returns");
  b.old_values = field("old_values");
  return b;
}

}  // namespace realign::runtime
