// Moves the rows of a batch (one row per sample: tokens, masks, log-probs, values, rewards) from the dp ranks
// of the call that produced them straight to the ranks of the call that consumes them, by sample index, over
// realloc/data_executor.h. Rows keep their own length: a consumer pads the rows it receives to the longest
// along every dimension but the first, with zeros (padding tokens, masked positions).
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "comm/group.h"
#include "plan/layout.h"
#include "realloc/data_executor.h"

namespace realign::runtime {

using Rows = std::map<std::string, at::Tensor>;  // field -> (rows, ...); every field has the same row count

// Collective over the ranks of `from` and `to` (group rank r = device r). `mine`: this rank's rows in
// `from` (samples_of(n, from, rank), in order; ignored outside it). Returns its rows in `to` (empty outside
// it), in sample order; with `to_segments` > 1 the rows of its share of every segment (realloc/data_plan.h:
// a train call's mini-batches). Same layout and one segment: `mine` itself. `stats` adds the bytes sent and
// received.
Rows exchange_rows(comm::Group& global, int64_t n_samples, const Layout& from, const Layout& to,
                   const Rows& mine, DataMoveStats* stats = nullptr, int64_t to_segments = 1);

// One batch's rows to move in a set of moves: produced under `from` (`mine`: this rank's rows there, as
// above; null or empty outside it), needed under `to` in `to_segments` segments.
struct RowMove {
  int64_t n_samples = 0;
  Layout from, to;
  const Rows* mine = nullptr;
  int64_t to_segments = 1;
};
// Several moves in one exchange (realloc/data_executor.h: one message per pair of ranks for all of them):
// result k is what exchange_rows gives for moves[k]. Moves where nothing changes place (same layout, one
// segment) return their rows without a message. `per_move` (optional): the payload bytes of each move.
std::vector<Rows> exchange_rows(comm::Group& global, const std::vector<RowMove>& moves,
                                DataMoveStats* stats = nullptr,
                                std::vector<DataMoveStats>* per_move = nullptr);

// The row-stacking half, exposed for tests: rows of one field, padded with zeros to the longest.
at::Tensor stack_padded(const std::vector<at::Tensor>& rows);

}  // namespace realign::runtime
