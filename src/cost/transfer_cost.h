// Reallocation and data-move costs: the exact bytes each destination device lacks when a model's parameters
// move from one layout to another (or a call's input batch moves from its producer's devices), and the time
// from the per-device inbound/outbound load on intra- and inter-node links.
#pragma once

#include <vector>

#include "cost/hardware_profile.h"
#include "graph/param_layout.h"
#include "plan/cluster.h"
#include "plan/layout.h"

namespace realign {

struct TransferCost {
  double bytes = 0;         // total bytes received, all devices
  double max_inbound = 0;   // bytes, the busiest receiver
  double max_outbound = 0;  // bytes, the busiest sender
  bool crosses_nodes = false;
  double time_s = 0;
  double latency_s = 0;  // the one link latency time_s includes
};

// Parameters (bf16) from `src` to `dst`. A destination device that already holds part of a tensor (it is in
// `src` and its shard there overlaps the one it needs) receives only the rest. Each missing slice is sent by
// the source replica (dp rank dst_dp mod src.dp) of the source stage holding it, so senders share the load.
// time = max over devices of max(inbound, outbound) link time (intra- and inter-node bytes at their own
// bandwidths) + one latency of the slowest link used.
TransferCost realloc_cost(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& src,
                          const Layout& dst, const Cluster& cluster, const HardwareProfile& profile);
// Bytes each device of `dst` receives (index: rank in dst), for tests and the runtime's comparison.
std::vector<double> realloc_inbound_bytes(const std::vector<ParamInfo>& params, int64_t n_layers,
                                          const Layout& src, const Layout& dst);

// A call's input batch of n_seqs sequences (bytes_per_seq each) moved straight from the devices of the call
// that produced it (`producer`) to those of the call that consumes it (`consumer`), as the runtime moves rows
// (realloc/data_plan.h). Every device of a data-parallel rank holds that rank's balanced share of the
// sequences; a consumer device receives the sequences of its share that it does not already hold. With
// `consumer_segments` > 1 (a train call's mini-batches) a consumer's share is its dp rank's share of every
// segment. Senders are assumed spread evenly over the producer's devices; the link is inter-node when the
// two layouts together span nodes. Zero when each consumer device holds its share already.
TransferCost data_move_cost(int64_t n_seqs, double bytes_per_seq, const Layout& producer,
                            const Layout& consumer, const Cluster& cluster, const HardwareProfile& profile,
                            int64_t consumer_segments = 1);

}  // namespace realign
