#include "model/token_batch.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/error.h"

namespace realign::model {
namespace {

BuiltBatch fill(const std::vector<std::vector<int64_t>>& seqs, const std::vector<SequencePlacement>& where,
                int64_t rows, int64_t len, int64_t pad_id) {
  BuiltBatch out;
  out.placements = where;
  at::Tensor tokens = at::full({rows, len}, pad_id, at::kLong);
  at::Tensor positions = at::zeros({rows, len}, at::kLong);
  at::Tensor segments = at::zeros({rows, len}, at::kInt);
  auto tok = tokens.accessor<int64_t, 2>();
  auto pos = positions.accessor<int64_t, 2>();
  auto seg = segments.accessor<int32_t, 2>();
  std::vector<int32_t> next_segment(rows, 1);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const SequencePlacement& p = where[i];
    const int32_t s = next_segment[p.row]++;
    for (int64_t t = 0; t < p.length; ++t) {
      tok[p.row][p.offset + t] = seqs[i][t];
      pos[p.row][p.offset + t] = t;
      seg[p.row][p.offset + t] = s;
    }
  }
  out.batch = TokenBatch{tokens, positions, segments};
  return out;
}

}  // namespace

BuiltBatch pad_batch(const std::vector<std::vector<int64_t>>& seqs, int64_t pad_id, int64_t min_len) {
  int64_t len = std::max<int64_t>(min_len, 1);
  std::vector<SequencePlacement> where;
  for (size_t i = 0; i < seqs.size(); ++i) {
    len = std::max<int64_t>(len, int64_t(seqs[i].size()));
    where.push_back({int64_t(i), 0, int64_t(seqs[i].size())});
  }
  return fill(seqs, where, int64_t(seqs.size()), len, pad_id);
}

BuiltBatch pack_batch(const std::vector<std::vector<int64_t>>& seqs, int64_t row_len, int64_t pad_id) {
  std::vector<int64_t> used;
  std::vector<SequencePlacement> where;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t n = int64_t(seqs[i].size());
    if (n > row_len)
      throw Error("sequences[" + std::to_string(i) + "]", "length " + std::to_string(n) +
                                                               " exceeds the packed row length " + std::to_string(row_len));
    size_t r = 0;
    while (r < used.size() && used[r] + n > row_len) ++r;
    if (r == used.size()) used.push_back(0);
    where.push_back({int64_t(r), used[r], n});
    used[r] += n;
  }
  return fill(seqs, where, std::max<int64_t>(int64_t(used.size()), 1), row_len, pad_id);
}

Targets next_token_targets(const TokenBatch& b) {
  const int64_t T = b.tokens.size(1);
  at::Tensor targets = at::zeros_like(b.tokens);
  at::Tensor mask = at::zeros(b.tokens.sizes(), b.tokens.options().dtype(at::kFloat));
  if (T > 1) {
    at::Tensor same = (b.segments.narrow(1, 0, T - 1) == b.segments.narrow(1, 1, T - 1)) &
                      (b.segments.narrow(1, 0, T - 1) > 0);
    targets.narrow(1, 0, T - 1).copy_(at::where(same, b.tokens.narrow(1, 1, T - 1), at::zeros_like(b.tokens.narrow(1, 1, T - 1))));
    mask.narrow(1, 0, T - 1).copy_(same.to(at::kFloat));
  }
  return {targets, mask};
}

at::Tensor gather_sequence(const at::Tensor& per_token, const SequencePlacement& p) {
  return per_token[p.row].narrow(0, p.offset, p.length);
}

}  // namespace realign::model
