// TokenBatch: one mechanism for padded and packed batches. Each row holds one or more sequences, told apart by
// segment ids; attention is causal and stays within a segment; positions restart per sequence.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace realign::model {

struct TokenBatch {
  at::Tensor tokens;     // (B, T) int64
  at::Tensor positions;  // (B, T) int64: position within its sequence (RoPE / learned positions)
  at::Tensor segments;   // (B, T) int32: 0 = padding, k > 0 = the k-th sequence of the row
};

// Where a sequence landed in a batch.
struct SequencePlacement {
  int64_t row = 0, offset = 0, length = 0;
};

struct BuiltBatch {
  TokenBatch batch;
  std::vector<SequencePlacement> placements;  // one per input sequence, in input order
};

// One sequence per row, right-padded with `pad_id` to the longest (or to `min_len` when longer).
BuiltBatch pad_batch(const std::vector<std::vector<int64_t>>& sequences, int64_t pad_id = 0, int64_t min_len = 0);

// Sequences packed first-fit (in input order) into rows of `row_len` tokens; throws Error when one is longer.
BuiltBatch pack_batch(const std::vector<std::vector<int64_t>>& sequences, int64_t row_len, int64_t pad_id = 0);

// Next-token targets: targets[b][t] = tokens[b][t+1] where t+1 is in the same segment, else 0, with
// mask (B, T) float 1 where a target exists.
struct Targets {
  at::Tensor targets;  // (B, T) int64
  at::Tensor mask;     // (B, T) float
};
Targets next_token_targets(const TokenBatch& batch);

// The per-token values of `placement` from a (B, T) tensor: a 1-D tensor of placement.length entries.
at::Tensor gather_sequence(const at::Tensor& per_token, const SequencePlacement& placement);

}  // namespace realign::model
