// Simulator: the discrete-event simulation of one iteration of the augmented dataflow graph (calls plus their
// parameter reallocations and data moves) on per-device timelines, with per-device memory.
// Rules: calls run in the graph's order; a call's reallocation starts when the source and destination devices
// are free (both take part); its data move starts when the producers are done and its devices are free; the
// call starts after both. Calls on disjoint meshes overlap. The iteration ends with its own work outside the
// calls on every device (HardwareProfile::iteration_overhead_s). Where a node has fewer compute slots than
// devices (CPU workers sharing cores), a second pass estimates each call with the ranks busy beside it in the
// first pass (estimate_call's busy_ranks).
// Memory: a trained model keeps weights + gradients + Adam state on its train call's devices all iteration; a
// model never trained keeps its weights on its first call's devices (its home layout,
// DataflowGraph::home_call, which the runtime uses too: devices outside a model's home hold nothing of it); a
// call on another layout adds a reallocated weight copy that lives only during the call (none when its
// devices already hold every slice they need, which the call then uses in place).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cost/call_cost.h"
#include "cost/hardware_profile.h"
#include "cost/simulation_result.h"
#include "cost/transfer_cost.h"

namespace realign {

// Not thread-safe: run() fills the caches. Give each search thread its own Simulator.
class Simulator {
 public:
  Simulator(DataflowGraph graph, Cluster cluster, HardwareProfile profile);

  // The plan's assignments must be in the graph's call order (validate_plan orders them).
  SimulationResult run(const ExecutionPlan& plan);

  // Cached per-call estimate (the same as estimate_call()).
  const CallEstimate& call_estimate(int mfc_index, const MfcAssignment& a);
  // Cached reallocation cost of `model` (an index into graph().models) between two layouts.
  const TransferCost& realloc(int model, const Layout& src, const Layout& dst);

  const DataflowGraph& graph() const { return graph_; }
  const Cluster& cluster() const { return cluster_; }
  const HardwareProfile& profile() const { return profile_; }
  size_t cache_size() const { return calls_.size() + reallocs_.size() + data_.size() + shards_.size(); }

 private:
  struct Key {
    int64_t a = 0, b = 0, c = 0;
    bool operator==(const Key& o) const { return a == o.a && b == o.b && c == o.c; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  static int64_t pack(const Layout& l);

  const ShardSizes& shards(int model, int tp, int pp);
  // Call i's estimate with `busy_ranks` beside it (estimate_call), uncached; shard sizes come from the cache.
  CallEstimate estimate(int i, const MfcAssignment& a, double busy_ranks);
  // Input `data` of a call moved straight from its producer's layout to the call's (data_move_cost).
  const TransferCost& data_move(int data, int64_t n_seqs, const Layout& src, const Layout& dst,
                                int64_t segments);
  // One pass over the plan; `busy` (per call, empty: each call's own ranks) sets its contention.
  SimulationResult simulate(const ExecutionPlan& plan, const std::vector<double>& busy);
  // Per call of a simulated iteration: the ranks of its busiest node busy during it, its own included.
  std::vector<double> busy_ranks(const SimulationResult& r) const;
  std::string oom_report(int device, int call, const ExecutionPlan& plan, const std::vector<Layout>& home,
                         const std::vector<bool>& offloaded, const std::vector<bool>& copy, double peak,
                         double limit);

  DataflowGraph graph_;
  Cluster cluster_;
  HardwareProfile profile_;
  // Per call: its model's index, and per input (data index, producer call index or -1 for the dataset).
  std::vector<int> call_model_;
  std::vector<std::vector<std::pair<int, int>>> inputs_;
  std::vector<int> home_call_;  // per model: the call whose layout is its home (train call or first call)
  std::vector<std::vector<ParamInfo>> params_;

  std::unordered_map<Key, CallEstimate, KeyHash> calls_;
  std::unordered_map<Key, TransferCost, KeyHash> reallocs_;
  std::unordered_map<Key, TransferCost, KeyHash> data_;
  std::unordered_map<Key, ShardSizes, KeyHash> shards_;
};

}  // namespace realign
