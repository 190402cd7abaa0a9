// ExecutionPlan: for every call of a dataflow graph, the device mesh and parallel strategy it runs with.
// A plan is data: it prints, saves to JSON, loads, diffs and validates against a graph and a cluster.
#pragma once

#include <string>
#include <vector>

#include "graph/dataflow_graph.h"
#include "plan/cluster.h"
#include "plan/device_mesh.h"
#include "plan/expert_parallel.h"
#include "plan/layout.h"

namespace realign {

// How a context-parallel group computes attention over its split sequence (Strategy::cp).
enum class ContextParallel { kRing, kUlysses };
std::string to_string(ContextParallel kind);  // "ring", "ulysses"
// "ring" or "ulysses", else an Error naming `path`.
ContextParallel context_parallel_from_string(const std::string& text, const std::string& path);

struct Strategy {
  int dp = 1;
  int tp = 1;
  int pp = 1;
  int micro_batches = 1;  // per dp rank and optimizer step (train) or per call (inference, generate)
  // Train calls only. zero1: the optimizer state (fp32 master, Adam m and v) is sharded over the dp ranks
  // (ZeRO stage 1, Megatron's distributed optimizer). recompute: a layer's activations are recomputed in the
  // backward pass from its stored input (Megatron's full recomputation): one more forward, far less memory.
  bool zero1 = false;
  bool recompute = false;
  // Expert parallelism of a mixture-of-experts model (plan/expert_parallel.h); 1 for a dense one. Last, so
  // the positional initialisers {dp, tp, pp, micro_batches, zero1, recompute} keep their meaning.
  int ep = 1;
  // Context parallelism (train and inference calls): each sequence's tokens split over cp ranks, the
  // parameters replicated over them as over dp, so a call's mesh is dp x tp x pp x cp and its parameters lie
  // as in a layout of dp*cp replicas (MfcAssignment::layout; Megatron's rank order tp, cp, dp, pp). One
  // degree, two ways of running attention over the split (cp_kind): Megatron's ring (NeMo-RL, veRL
  // Megatron; K/V chunks passed around the cp ranks, overlapped with attention) or DeepSpeed-Ulysses
  // (veRL FSDP's ulysses_sequence_parallel_size: all-to-alls trading the sequence split for a head split,
  // so each rank's heads must divide by cp). Priced in cost/context_parallel.h. Last again, for the same
  // reason as ep.
  int cp = 1;
  ContextParallel cp_kind = ContextParallel::kRing;
  bool operator==(const Strategy& o) const {
    return dp == o.dp && tp == o.tp && pp == o.pp && ep == o.ep && micro_batches == o.micro_batches &&
           zero1 == o.zero1 && recompute == o.recompute && cp == o.cp && cp_kind == o.cp_kind;
  }
  // Ranks holding the same parameter shard, over which gradients are reduced and ZeRO shards: dp x cp.
  int replicas() const { return dp * cp; }
  bool operator!=(const Strategy& o) const { return !(*this == o); }
};

struct MfcAssignment {
  std::string mfc;  // the call's name in the graph
  DeviceMesh mesh;
  Strategy strategy;
  // Where the call's parameters lie: the cp ranks of a dp group hold what dp replicas would.
  Layout layout() const {
    return Layout{mesh.first, strategy.replicas(), strategy.tp, strategy.pp, strategy.ep};
  }
  bool operator==(const MfcAssignment& o) const {
    return mfc == o.mfc && mesh == o.mesh && strategy == o.strategy;
  }
};

struct ExecutionPlan {
  std::string name;                        // "searched", "co-located", a file name
  std::vector<MfcAssignment> assignments;  // in the graph's call order
  // Groups of calls whose meshes must not overlap (e.g. generation vs training in a disaggregated placement).
  std::vector<std::vector<std::string>> disjoint;
  // Models that are never trained (reference, reward) kept in host memory between their calls: no device
  // holds them outside a call, and each call loads its shards from the host.
  std::vector<Role> offload;
  bool operator==(const ExecutionPlan& o) const {
    return assignments == o.assignments && disjoint == o.disjoint && offload == o.offload;
  }
};

Json to_json(const ExecutionPlan& plan);
// Reads a plan (shape only; validate_plan checks it against a graph and cluster). Errors name the field.
ExecutionPlan plan_from_json(const Json& j, const std::string& path);
ExecutionPlan load_plan_file(const std::string& file);
// A list of lists of call names ("disjoint" groups), as plan files and the config's plan section write them.
std::vector<std::vector<std::string>> disjoint_from_json(const Json& j, const std::string& path);
void save_plan_file(const ExecutionPlan& plan, const std::string& file);

// Throws Error naming the offending field ("plan.mfcs[3].tp: 3 does not divide 32 attention heads").
// The assignments are reordered to the graph's call order. `serving_engine`: as strategy_problem's.
void validate_plan(const DataflowGraph& graph, const Cluster& cluster, ExecutionPlan& plan,
                   const std::string& path = "plan", bool serving_engine = false);

// Empty when the strategy can run the call on a mesh of that size on this cluster, else why not (no memory
// check: memory is the cost model's job). Shared by validation and the search's candidate enumeration.
// `serving_engine`: generation runs on a serving engine (an external engine's vLLM or SGLang), which
// replicates KV heads under a tp above them (tp_incompatibility) and may run a replica's tp over whole nodes;
// realign's own runtime does neither.
std::string strategy_problem(const Mfc& mfc, const ModelSpec& spec, const Cluster& cluster, int mesh_size,
                             const Strategy& s, bool serving_engine = false);

// "d2t4p1 x4", "d4t2p1e8 x4 zero1 recompute", "d4t2p8c2e16 x8 zero1" (c: context parallel, ring),
// "d8t1p1c4 x2 ulysses".
std::string to_string(const Strategy& s);

}  // namespace realign
