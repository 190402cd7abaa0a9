// The per-call time model: time and memory of one model function call alone on its mesh (no reallocation, no
// waiting), from the hardware profile. Communication (TP, PP, DP) is part of every estimate.
#pragma once

#include "cost/hardware_profile.h"
#include "cost/memory_model.h"
#include "graph/dataflow_graph.h"
#include "plan/execution_plan.h"

namespace realign {

struct CallEstimate {
  double time_s = 0;
  // Parts of time_s on the critical path (they add up to time_s).
  double compute_s =
      0;              // matmuls, attention, memory-bound decode and optimizer kernels, incl. pipeline bubble
  double comm_s = 0;  // TP all-reduces, PP hand-offs, DP gradient all-reduce
  double overhead_s = 0;                // kernel launches
  double bubble_fraction = 0;           // 1F1B / pipeline-fill idle share, (pp-1)/(micro_batches+pp-1);
                                        // generation: its stage slots' idle share (generate_time)
  double tail_s = 0;                    // generate: decoding after 90% of the slowest replica's samples ended
  double flops = 0;                     // all FLOPs of the call, all devices
  MemoryBreakdown memory;               // the worst device
  std::vector<MemoryBreakdown> stages;  // (pp) a device of each pipeline stage
};

// Bytes per parameter of the largest shard that the memory-bound passes of one optimizer step move.
double optimizer_step_bytes(const Strategy& s);

// Whether a mesh crosses a node boundary.
bool mesh_spans_nodes(const DeviceMesh& mesh, const Cluster& cluster);

// The estimate for graph.mfcs[mfc_index] under `assignment`. `busy_ranks`: ranks of its node busy during the
// call, its own included (0: its own only). Where a node has fewer compute slots than ranks (CPU workers
// sharing cores), a collective waits for its peers to be scheduled: its latency grows with busy_ranks /
// slots.
CallEstimate estimate_call(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& profile,
                           int mfc_index, const MfcAssignment& assignment, double busy_ranks = 0);

// The same from its parts; `shards` is shard_sizes() of the model under (tp, pp). The simulator caches this.
CallEstimate estimate_call(const ModelRole& model, const Mfc& mfc, const Strategy& s, bool spans_nodes,
                           int devices_per_node, const HardwareProfile& profile, const ShardSizes& shards,
                           double busy_ranks = 0);

}  // namespace realign
