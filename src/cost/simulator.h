// Simulator: the discrete-event simulation of one iteration of the augmented dataflow graph (calls plus their
// parameter reallocations and data moves) on per-device timelines, with per-device memory; with staleness
// N > 0 (DataflowGraph::staleness), of consecutive overlapping iterations until their time per iteration
// settles (the steady state).
// Rules: calls run in the graph's order (N > 0: graph/call_schedule.h's steps, the order the runtime runs); a
// call's reallocation starts when the source and destination devices are free (both take part); its data move
// starts when the producers are done and its devices are free; the call starts after both. Calls on disjoint
// meshes overlap. The iteration ends with its own work outside the calls on every device
// (HardwareProfile::iteration_overhead_s). Where a node has fewer compute slots than devices (CPU workers
// sharing cores), a second pass estimates each call with the ranks busy beside it in the first pass
// (estimate_call's busy_ranks). Memory: a trained model keeps weights + gradients + Adam state on its train
// call's devices all iteration; a model never trained keeps its weights on its first call's devices (its home
// layout, DataflowGraph::home_call, which the runtime uses too: devices outside a model's home hold nothing
// of it); a call on another layout adds a reallocated weight copy that lives only during the call (none when
// its devices already hold every slice they need, which the call then uses in place). Staleness N > 0: the
// simulator places the call instances of steps 1, 2, ... (step_calls) one by one by the rules above, in step
// order on each device; an instance also waits for the train calls of earlier iterations whose weights it
// reads (iteration_edges): the generation of iteration i for the actor's train call of iteration i-1-N, which
// is when the reallocation of that weight version to the generation layout can start. Every step ends with
// the host's work (iteration_overhead_s) on every device, as an iteration does when synchronous, so steps
// after the first (which also generates ahead for iterations 1..N) repeat: the simulation stops, adaptively,
// once two consecutive steps take the same time (at step 3 under this rule; at most kMaxSteps), and that time
// is the time per iteration. Generation devices whose layout is not the actor's home keep the generation's
// weight copy between calls (the version training does not overwrite) and the N batches in flight.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost/call_cost.h"
#include "cost/hardware_profile.h"
#include "cost/simulation_result.h"
#include "cost/transfer_cost.h"
#include "graph/call_schedule.h"

namespace realign {

// Not thread-safe: run() fills the caches. Give each search thread its own Simulator.
class Simulator {
 public:
  Simulator(DataflowGraph graph, Cluster cluster, HardwareProfile profile);

  // Steps simulated at most for staleness > 0 (a bound; under today's rules two steps after the first
  // already repeat).
  static constexpr int64_t kMaxSteps = 16;

  // The plan's assignments must be in the graph's call order (validate_plan orders them).
  SimulationResult run(const ExecutionPlan& plan);
  // The same iteration time, per-call times and memory, without the timeline's events or the out-of-memory
  // report's text: what a search scores a plan by, 200,000 times.
  SimulationResult score(const ExecutionPlan& plan);

  // Fixes call `mfc`'s time under every assignment (its memory stays the model's): for hand-computable
  // tests and what-if questions ("if generation took 3 s"). Clears the call cache.
  void set_call_time(int mfc, double time_s);

  // Generation calls estimated under `profile` from now on (a serving engine's: engines/pricing.h), every
  // other call under the simulator's own; so a staleness steady state overlaps the generation the engine
  // runs. Clears the call cache.
  void set_generation_profile(HardwareProfile profile);
  // Training and inference calls estimated under `profile` from now on (an engine's own pass efficiency:
  // engines/pricing.h), generation as set_generation_profile says. Clears the call cache.
  void set_pass_profile(HardwareProfile profile);
  // Generation takes turns with training on the devices they share (an engine's colocated mode: NeMo-RL's
  // offload_before_refit and offload_after_refit, AReaL's memory saver): for each generate call, every model
  // whose home shares its devices has its state there (weights, gradients, optimizer state) in host memory,
  // so the call's memory leaves it out. The result reports, per device, that state and the turn's peak; the
  // round trip's time is the engine's to price (engines/pricing.h). Off by default: realign's runtime keeps
  // each model's home on its devices.
  void set_generation_turns(bool on) { generation_turns_ = on; }
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
  // Both layouts moved down by whole nodes until the lower one starts on the first node. Transfer costs see
  // devices only relative to each other and to node boundaries, so a pair and its shifted copy cost exactly
  // the same: the caches key on the shifted pair, and a search that tries one move at many offsets (a
  // 1,024-device cluster has 128 nodes) prices it once.
  std::pair<Layout, Layout> to_first_node(Layout src, Layout dst) const;
  struct RunState;  // one simulation's timelines, memory and call instance ends (detail/)

  const ShardSizes& shards(int model, int tp, int pp, int ep);
  // Call i's estimate with `busy_ranks` beside it (estimate_call), uncached; shard sizes come from the cache.
  CallEstimate estimate(int i, const MfcAssignment& a, double busy_ranks);
  // Input `data` of a call moved straight from its producer's layout to the call's (data_move_cost).
  const TransferCost& data_move(int data, int64_t n_seqs, const Layout& src, const Layout& dst,
                                int64_t segments);
  // One pass over the plan; `busy` (per call, empty: each call's own ranks) sets its contention.
  SimulationResult simulate(const ExecutionPlan& plan, const std::vector<double>& busy, bool detailed);
  // run() or score(): the second pass (contention) reads the first pass's timeline.
  SimulationResult run(const ExecutionPlan& plan, bool detailed);
  // Places one call instance (its load or reallocation, data move and the call) on the timelines.
  void place(int i, int64_t iteration, const ExecutionPlan& plan, const std::vector<double>& busy,
             RunState& st, SimulationResult& r);
  // Per call of a simulated iteration: the ranks of its busiest node busy during it, its own included.
  std::vector<double> busy_ranks(const SimulationResult& r) const;
  // Per device, what it holds between calls: each model's home (unless offloaded), and with staleness the
  // weight copies generation keeps and its batches in flight (simulator_memory.cc, as the two below).
  void hold_persistent_state(const ExecutionPlan& plan, RunState& st);
  // `in_turn`: the peak is generation's turn (set_generation_turns), the homes in host memory.
  std::string oom_report(int device, int call, bool in_turn, const ExecutionPlan& plan, const RunState& st,
                         double peak, double limit);
  // Bytes of the batches in flight a generation call's device holds with staleness N: N batches of its
  // outputs (its dp rank's share).
  double in_flight_bytes(int call, const MfcAssignment& a) const;

  DataflowGraph graph_;
  Cluster cluster_;
  HardwareProfile profile_;
  std::optional<HardwareProfile> generation_profile_;
  std::optional<HardwareProfile> pass_profile_;
  bool generation_turns_ = false;
  // Per call: its model's index, and per input (data index, producer call index or -1 for the dataset).
  std::vector<int> call_model_;
  std::vector<std::vector<std::pair<int, int>>> inputs_;
  std::vector<int> home_call_;  // per model: the call whose layout is its home (train call or first call)
  std::vector<std::vector<ParamInfo>> params_;
  // Per call: the train calls whose weights it reads, (train call, lag) (iteration_edges).
  std::vector<std::vector<std::pair<int, int64_t>>> weight_edges_;
  std::vector<double> fixed_time_;  // per call: set_call_time's value, or < 0
  // step_calls of steps 1 and 2 of a long run; step s > 2 is step 2 with every iteration s - 2 later.
  std::vector<CallInstance> first_step_, second_step_;

  std::unordered_map<Key, CallEstimate, KeyHash> calls_;
  std::unordered_map<Key, TransferCost, KeyHash> reallocs_;
  std::unordered_map<Key, TransferCost, KeyHash> data_;
  std::unordered_map<Key, ShardSizes, KeyHash> shards_;
};

}  // namespace realign
