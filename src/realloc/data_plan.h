// DataPlan: how a batch of N samples moves from the layout that produced it to the layout that consumes it.
// Pure (no torch). Sample i lives on every rank (all tp and pp ranks) of the producer's dp group that owns it
// (balanced_part over dp); every rank of a consumer dp group needs that group's balanced share. A rank that
// already holds a sample it needs copies it locally; every other needed sample crosses the wire exactly once
// per destination, from one of its holders (spread over them, least-loaded first).
// Executed by realloc/data_executor.h; parameter moves are the sibling realloc/transfer_plan.h.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/param_layout.h"
#include "plan/layout.h"

namespace realign {

struct SampleTransfer {
  int src = 0;  // global ranks; src == dst for a local copy
  int dst = 0;
  Range samples;  // sample indices [begin, end)
  bool operator==(const SampleTransfer& o) const {
    return src == o.src && dst == o.dst && samples == o.samples;
  }
};

struct DataPlan {
  int64_t n_samples = 0;
  Layout producer, consumer;
  int64_t consumer_segments = 1;
  std::vector<SampleTransfer> transfers;     // src != dst, sorted by (src, dst, samples.begin)
  std::vector<SampleTransfer> local_copies;  // src == dst
  int64_t samples_moved = 0;                 // sum over transfers
  int64_t samples_minimum = 0;               // samples consumer ranks need and do not hold
};

// The samples a rank holds (producer) or needs (consumer) in `layout`: its dp group's balanced share; empty
// outside the layout.
Range samples_of(int64_t n_samples, const Layout& layout, int device);
// The samples a rank needs when the batch is cut into `segments` contiguous segments (balanced_part) and each
// dp group takes its balanced share of every segment: one range per segment, in order (some may be empty).
// segments = 1 gives {samples_of(...)}; empty outside the layout.
std::vector<Range> segment_shares(int64_t n_samples, const Layout& layout, int device, int64_t segments);
// The same for dp rank `part` of `parts`.
std::vector<Range> segment_shares(int64_t n_samples, int64_t segments, int part, int parts);

// Pieces of at least `split_min_samples` samples are split across their holders.
DataPlan plan_data_redistribution(int64_t n_samples, const Layout& producer, const Layout& consumer,
                                  int64_t consumer_segments = 1, int64_t split_min_samples = 4);

}  // namespace realign
