// Helpers the trainer's steps share: seeds mixed from (seed, step, row), a step's records picked by index,
// token lists as batch rows (to move between call layouts) and back, and statistics over every rank's rows of
// the batch, so results do not depend on how the rows are split. Internal to train/.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/group.h"
#include "graph/param_layout.h"
#include "runtime/row_exchange.h"
#include "runtime/sequence_batch.h"

namespace realign::train {

// One 64-bit seed from three (a seed, a step or stream, a row), so each draws its own random stream.
inline uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL ^
               c * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ULL;
  return x ^ (x >> 32);
}

template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<int64_t>& idx, int64_t begin, int64_t end) {
  std::vector<T> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(all[size_t(idx[size_t(i)])]);
  return out;
}

// Token lists as batch rows: `name` (rows, longest) zero-padded and `name`_len (rows).
runtime::Rows token_rows(const std::string& name, const std::vector<runtime::TokenIds>& lists);
std::vector<runtime::TokenIds> token_lists(const runtime::Rows& rows, const std::string& name);

// (B, T') per-token rows brought to the T columns of a local batch (rows arrive padded to the longest
// sender).
at::Tensor fit_columns(const at::Tensor& x, int64_t T);

// The sample indices of a range, in order.
std::vector<int64_t> range_indices(const Range& r);

// A (B) per-sequence tensor of the rows `index` on each rank of `group` (which together hold every row of the
// batch once) assembled into the whole batch's (n) on every rank; exact (each entry has one contribution).
at::Tensor gather_rows(comm::Group& group, const at::Tensor& mine, const std::vector<int64_t>& index,
                       int64_t n);

// (x - mean) / std over the masked entries of the rows every rank of `group` holds (advantage whitening
// independent of the split).
at::Tensor global_masked_whiten(comm::Group& group, const at::Tensor& x, const at::Tensor& mask);

}  // namespace realign::train
