// The candidate assignments (mesh, strategy) of each call that the search chooses among.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/plan_evaluator.h"

namespace realign {

// Every valid strategy for a call on a mesh of `mesh_size` devices (dp*tp*pp = size, tp within a node and
// dividing the heads, pp <= layers, micro-batches a power of two up to the sequences per dp rank, capped; a
// mixture-of-experts model's ep a power of two dividing its experts and dp*tp); for a train call each also
// with ZeRO-1 (dp > 1) and with activation recomputation. Generation takes micro-batches only when pipelined,
// unless `generation_waves` (generation on a serving engine, as the engines' searches set it: also a tp
// above the KV heads, which a serving engine replicates, and a tp over whole nodes, strategy_problem).
// Context parallelism is not proposed (cp = 1): at a given mesh it gives each rank the tokens that dp gives it
// (the same GEMMs, activations and gradient reduction, Strategy::cp) plus its exchanges, so it wins only where
// one sequence's activations bind memory with every micro-batch a sequence and recomputation on, at lengths
// beyond the examples', or where a step has fewer sequences than the mesh has replicas; doubling every train
// and inference call's choices for those would slow the search for all. Plans take it from the engines'
// scripts and from plan files.
std::vector<Strategy> enumerate_strategies(const Mfc& mfc, const ModelSpec& spec, const Cluster& cluster,
                                           int mesh_size, int max_micro_batches = 16,
                                           bool generation_waves = false);

struct CandidateOptions {
  // Per call and mesh size, keep at most this many strategies from the time/memory Pareto front (strategies
  // that no other strategy beats on both time and memory): the fastest, the leanest and some between. Memory
  // matters beyond the call itself, since other models' state shares the devices.
  int strategies_per_mesh_size = 4;
  bool all_node_runs = false;  // see enumerate_meshes
  // Only what realign's runtime executes today (runtime_limit_problem): used when planning a training run.
  bool runtime_limits = false;
  // Generation may also take its batch in waves without pipelining (micro-batches at pp 1): how a serving
  // engine (vLLM, SGLang) runs a batch whose KV cache exceeds its memory share, at most as many sequences at
  // once as the cache holds. realign's own generation gains nothing by it when the batch fits, so its search
  // leaves these out; the engines' searches need them where the whole batch's cache does not fit.
  bool generation_waves = false;
  // An external engine's placement rules as a filter on proposals (engines/): the meshes a call may use and
  // the strategies it may take there (empty: allowed, else why not). Unset: no restriction.
  std::function<std::string(size_t call, const DeviceMesh& mesh)> mesh_filter;
  std::function<std::string(size_t call, int mesh_size, const Strategy& s)> strategy_filter;
};

// Empty when realign's runtime can execute the assignment, else why not: activations are not recomputed,
// sequences are not split (cp = 1);
// with expert parallelism (ep > 1) the optimizer state is not sharded (zero1) and generation is not
// pipelined. Any call, train calls included, may run on any mesh with any dp x tp x pp x ep (generation
// too: pipelined over its micro-batches, runtime/pipeline.h).
std::string runtime_limit_problem(const DataflowGraph& graph, const MfcAssignment& a);

// Empty when realign's runtime can build every model of the graph, else why not, naming the model's config
// field ("models.actor"; the reason names the spec's field, graph/model_spec.h runtime_model_problem). The
// runtime runs dense models and softmax-routed mixtures of experts (Mixtral, Qwen2-MoE, Qwen3-MoE), not
// DeepSeek-V3's latent attention and biased sigmoid routing; the planner plans and prices them all.
struct ModelProblem {
  std::string field;  // "models.<role>"
  std::string why;
};
std::optional<ModelProblem> runtime_model_problem(const DataflowGraph& graph);

// Whether plans for `cluster` must keep to the runtime's limits: a cluster realign's runtime executes (CPU
// devices, is_cpu_device). `realign plan`, `simulate` and `train` all plan such a config the same way, so a
// plan printed or saved for it runs in `realign train`; GPU clusters, which the runtime does not run yet, are
// planned with everything their engines do (recomputation included).
bool runtime_runs(const Cluster& cluster);

// Call `call`'s strategies on a mesh of `mesh_size` devices (enumerate_strategies); with `runtime_limits`,
// only those the runtime executes.
std::vector<Strategy> call_strategies(const DataflowGraph& graph, const Cluster& cluster, size_t call,
                                      int mesh_size, bool runtime_limits, int max_micro_batches = 16,
                                      bool generation_waves = false);

// candidates[i] lists call i's assignments, fastest standalone first. A call with no candidate that fits on
// its own keeps its least-overflowing ones, so the search can still report the best it can do. The
// evaluator's standalone memory is its overflow plus the limit; only the order of overflows matters here.
std::vector<std::vector<MfcAssignment>> build_candidates(const DataflowGraph& graph, const Cluster& cluster,
                                                         PlanEvaluator& evaluator,
                                                         const CandidateOptions& options);

}  // namespace realign
