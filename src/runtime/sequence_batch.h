// SequenceBatch: prompt + response token sequences, one per row (right-padded), with next-token targets and
// the mask of the positions whose target is a response token: what every inference and training call takes.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "model/token_batch.h"

namespace realign::runtime {

using TokenIds = std::vector<int64_t>;

struct SequenceBatch {
  model::TokenBatch batch;   // (B, T)
  at::Tensor targets;        // (B, T) int64: the token after position t (0 where none)
  at::Tensor response_mask;  // (B, T) float: 1 where targets[b][t] is a response token
  std::vector<int64_t> prompt_lens, response_lens;
  int64_t size() const { return int64_t(prompt_lens.size()); }
};

// Rows prompts[i] + responses[i]. A response may be empty (its row has no masked position).
SequenceBatch make_sequence_batch(const std::vector<TokenIds>& prompts,
                                  const std::vector<TokenIds>& responses, int64_t pad_id = 0);

// Rows [begin, end) (views), for micro- and mini-batches.
SequenceBatch slice_rows(const SequenceBatch& b, int64_t begin, int64_t end);

// Per-row sum over the response mask: (B) summed response log-probs (DPO) from (B, T) per-token values.
at::Tensor sum_over_response(const at::Tensor& per_token, const SequenceBatch& b);
// Per-row value at the last response position (reward-model scores): (B).
at::Tensor last_response_value(const at::Tensor& per_token, const SequenceBatch& b);

// (B) fp32: `penalty` for each response that does not end with one of `stop_tokens` (cut at gen_len, or
// empty), else 0 (TRL's missing_eos_penalty).
at::Tensor missing_stop_penalties(const std::vector<TokenIds>& responses,
                                  const std::vector<int64_t>& stop_tokens, double penalty);

}  // namespace realign::runtime
