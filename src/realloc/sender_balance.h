// Sender choice shared by the parameter and data plans: a demand (a destination needs units [begin, end) that
// several source ranks hold) is given to the least-loaded holders, large demands split across them, so that no
// single sender becomes the bottleneck. Pure and deterministic: every rank computes the same assignment.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/param_layout.h"

namespace realign::realloc_detail {

struct Demand {
  int dst = 0;
  Range units;                  // what the destination needs, in units
  int64_t unit_weight = 1;      // elements (or samples) per unit, to weigh the load
  std::vector<int> candidates;  // global ranks holding all of `units`, distinct
  int tag = 0;                  // caller's bookkeeping (which parameter / piece)
};

struct Assignment {
  int tag = 0;
  int src = 0;
  int dst = 0;
  Range units;
};

// Demands of at least `split_min_weight` are split into near-equal unit ranges over up to all their
// candidates; smaller ones go whole to one. Largest demands are placed first (LPT), each part to the
// candidate with the least load so far (ties: the candidate after the destination's position, to spread).
// `load` (indexed by global rank, grown as needed) carries the outbound load across calls.
std::vector<Assignment> assign_senders(std::vector<Demand> demands, int64_t split_min_weight,
                                       std::vector<int64_t>& load);

}  // namespace realign::realloc_detail
