// The rows of an RL step moving between its calls: each call's rows stay on its own ranks, and every call
// gets its inputs straight from the ranks of the calls that produced them (CallPlacement::move_rows), the
// inputs of calls that run together in one exchange; and what rows a rank handles in a call's layout.
#include <ATen/ATen.h>

#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

std::vector<runtime::TokenIds> Trainer::prompts_of(const BatchRows& rows,
                                                   const std::vector<int64_t>& index) const {
  std::vector<runtime::TokenIds> out;
  for (int64_t i : index) out.push_back(codec_.encode_prompt(record_of(rows, i).prompt));
  return out;
}

std::vector<int64_t> Trainer::segmented_rows(const std::string& call, Role role, int64_t n,
                                             int64_t segments) const {
  std::vector<int64_t> out;
  for (const Range& r : segment_shares(n, place_->layout_of(call, role), rank(), segments))
    for (int64_t i = r.begin; i < r.end; ++i) out.push_back(i);
  return out;
}

at::Tensor Trainer::stop_penalised(const at::Tensor& scores,
                                   const std::vector<runtime::TokenIds>& responses) const {
  const double penalty = train_config_.ppo.missing_stop_penalty;
  if (penalty <= 0) return scores;
  return scores - runtime::missing_stop_penalties(responses, codec_.stop_tokens(), penalty);
}

std::vector<runtime::Rows> Trainer::bring_inputs(int64_t n, const std::vector<Consumer>& consumers) {
  std::vector<runtime::CallPlacement::RowsMove> moves;
  std::vector<size_t> owner;
  for (size_t c = 0; c < consumers.size(); ++c) {
    const Consumer& to = consumers[c];
    for (const Input& in : to.inputs) {
      runtime::Rows fields;
      for (const std::string& f : in.fields) {
        auto it = in.from->rows.find(f);
        if (it != in.from->rows.end()) fields[f] = it->second;
      }
      moves.push_back(
          {to.call, in.from->layout, place_->layout_of(to.call, to.role), n, fields, to.segments});
      owner.push_back(c);
    }
  }
  const std::vector<runtime::Rows> got = place_->move_rows(moves);
  std::vector<runtime::Rows> out(consumers.size());
  for (size_t k = 0; k < got.size(); ++k)
    for (const auto& [field, tensor] : got[k]) out[owner[k]][field] = tensor;
  return out;
}

}  // namespace realign::train
