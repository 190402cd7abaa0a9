#include "runtime/sequence_batch.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/check.h"

namespace realign::runtime {

SequenceBatch make_sequence_batch(const std::vector<TokenIds>& prompts,
                                  const std::vector<TokenIds>& responses, int64_t pad_id) {
  REALIGN_CHECK(prompts.size() == responses.size()) << prompts.size() << " vs " << responses.size();
  std::vector<TokenIds> rows(prompts.size());
  SequenceBatch out;
  for (size_t i = 0; i < prompts.size(); ++i) {
    REALIGN_CHECK(!prompts[i].empty()) << "row " << i << " has an empty prompt";
    rows[i] = prompts[i];
    rows[i].insert(rows[i].end(), responses[i].begin(), responses[i].end());
    out.prompt_lens.push_back(int64_t(prompts[i].size()));
    out.response_lens.push_back(int64_t(responses[i].size()));
  }
  model::BuiltBatch built = model::pad_batch(rows, pad_id);
  out.batch = built.batch;
  model::Targets t = model::next_token_targets(out.batch);
  out.targets = t.targets;
  const int64_t B = int64_t(rows.size()), T = out.batch.tokens.size(1);
  std::vector<float> mask(size_t(B * T), 0.f);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < out.response_lens[size_t(b)]; ++k)
      mask[size_t(b * T + out.prompt_lens[size_t(b)] - 1 + k)] = 1.f;
  out.response_mask = at::from_blob(mask.data(), {B, T}, at::kFloat).clone();
  return out;
}

SequenceBatch slice_rows(const SequenceBatch& b, int64_t begin, int64_t end) {
  SequenceBatch out;
  out.batch.tokens = b.batch.tokens.slice(0, begin, end);
  out.batch.positions = b.batch.positions.slice(0, begin, end);
  out.batch.segments = b.batch.segments.slice(0, begin, end);
  out.targets = b.targets.slice(0, begin, end);
  out.response_mask = b.response_mask.slice(0, begin, end);
  out.prompt_lens.assign(b.prompt_lens.begin() + begin, b.prompt_lens.begin() + end);
  out.response_lens.assign(b.response_lens.begin() + begin, b.response_lens.begin() + end);
  return out;
}

at::Tensor sum_over_response(const at::Tensor& per_token, const SequenceBatch& b) {
  return (per_token * b.response_mask).sum(1);
}

at::Tensor last_response_value(const at::Tensor& per_token, const SequenceBatch& b) {
  std::vector<int64_t> index;
  for (int64_t i = 0; i < b.size(); ++i)  // the last token of the sequence has seen all of it
    index.push_back(b.prompt_lens[size_t(i)] + b.response_lens[size_t(i)] - 1);
  at::Tensor idx = at::tensor(index, at::kLong).unsqueeze(1);
  return per_token.gather(1, idx).squeeze(1);
}

at::Tensor missing_stop_penalties(const std::vector<TokenIds>& responses,
                                  const std::vector<int64_t>& stop_tokens, double penalty) {
  std::vector<float> out;
  for (const TokenIds& r : responses) {
    const bool stopped =
        !r.empty() && std::find(stop_tokens.begin(), stop_tokens.end(), r.back()) != stop_tokens.end();
    out.push_back(stopped ? 0.f : float(penalty));
  }
  return at::tensor(out, at::kFloat);
}

}  // namespace realign::runtime
