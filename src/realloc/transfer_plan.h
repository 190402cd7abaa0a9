// TransferPlan: who sends which slice of which parameter to whom when a model's shards move from one Layout
// to another. A pure function of (parameters, layer count, source and destination layouts): no torch, no
// communication; every rank computes the same plan and executes its part (realloc/realloc_executor.h).
//
// Guarantees (tests/realloc/transfer_plan_test.cc checks them over many random layout pairs):
// - every element of every destination shard is produced exactly once: by a local copy when the destination
//   rank already holds it in its source shard, else by exactly one transfer from a source rank holding it;
// - so each byte a destination lacks crosses the wire once, and bytes_moved == bytes_minimum;
// - the sending is spread over the source replicas (dp copies, both holders of a tied embedding, every tp rank
//   of a replicated tensor): least-loaded sender first, large pieces split across replicas.
// Expert stacks of a mixture-of-experts model are planned expert by expert, so layouts that differ in ep
// (whole experts per ep rank) or in tp (each expert's inner dimension cut) exchange exactly what is missing.
// Any pair of layouts works: tp sizes that do not divide each other (ranges are intersections of the two
// layouts' balanced_part shard ranges, on split_unit boundaries), dp/tp/pp changing together, overlapping or
// disjoint device sets.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/param_layout.h"
#include "plan/held_slice.h"  // slice_dim, held_slice: what a device holds, used with the plans
#include "plan/layout.h"

namespace realign {

// One slice of one parameter: elements `range` along `dim` (the parameter's split_dim, or 0 for a replicated
// parameter), all of every other dimension. Offsets are where the slice starts along `dim` in the source
// and destination shards.
struct SliceTransfer {
  int param = 0;  // index into the parameter list the plan was made from
  int src = 0;    // global ranks (devices); src == dst for a local copy
  int dst = 0;
  int dim = 0;
  Range range;             // full-tensor coordinates along `dim`
  int64_t src_offset = 0;  // range.begin - (the source shard's begin along dim)
  int64_t dst_offset = 0;
  int64_t numel = 0;  // elements in the slice
  // An expert stack's slices are one expert each (plan/held_slice.h held_expert_slice): its index along
  // dim 0, in full-tensor coordinates; -1 for any other parameter.
  int64_t expert = -1;
  bool operator==(const SliceTransfer& o) const;
};

struct TransferPlan {
  Layout from, to;
  std::vector<SliceTransfer> transfers;     // src != dst, sorted by (src, dst, param, range.begin)
  std::vector<SliceTransfer> local_copies;  // src == dst, sorted by (dst, param, range.begin)
  int64_t elements_moved = 0;    // sum of transfers' numel
  int64_t elements_minimum = 0;  // elements destination ranks need and do not already hold
  int64_t bytes_moved(int64_t element_bytes) const { return elements_moved * element_bytes; }
  int64_t bytes_minimum(int64_t element_bytes) const { return elements_minimum * element_bytes; }
};

struct TransferPlanOptions {
  // A missing piece of at least this many elements is split across all source replicas holding it.
  int64_t split_min_elements = int64_t(1) << 16;
};

// `n_layers`: the model's layer count (pipeline stages cut it with stage_layers). Layouts must have positive
// degrees; stages or tp ranks that hold nothing (pp > n_layers, tp > a tensor's units) are allowed.
TransferPlan plan_reallocation(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& from,
                               const Layout& to, const TransferPlanOptions& options = {});

}  // namespace realign
