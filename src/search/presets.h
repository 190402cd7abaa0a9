// Fixed placements, as plans and as baselines for the search:
//  - co-located: every call on the whole cluster with one shared (dp, tp, pp) by Megatron-LM's rule: the
//    smallest model-parallel size that fits, tensor parallelism first up to a node, then pipeline stages;
//    train calls recompute activations, as fixed-layout engines run by default (ReaLHF's heuristic did);
//  - heuristic: every call on the whole cluster, each with its own best strategy (in the spirit of ReaL's
//    Megatron-based heuristic);
//  - interleaving (arXiv 2312.11819): calls that do not depend on each other run side by side on their own
//    devices; the others use the whole cluster;
//  - disaggregated (arXiv 2312.11819): generation on its own devices with a shadow copy of the actor, all
//    other calls on the rest.
// Each preset picks its free choices (strategies, the split of devices) by the evaluator.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/plan_evaluator.h"

namespace realign {

std::vector<std::string> preset_names();  // co-located, heuristic, interleaving, disaggregated

// Empty when the preset cannot be formed on this cluster (e.g. disaggregation on a single device).
// The returned plan may not fit in memory: check its score. `runtime_limits`: only strategies realign's
// runtime executes (runtime_limit_problem), for a training run.
std::optional<ExecutionPlan> make_preset(const std::string& name, const DataflowGraph& graph,
                                         const Cluster& cluster, PlanEvaluator& evaluator,
                                         bool runtime_limits = false);

// Every call on the whole cluster in `layout` (its first device is ignored), each call choosing its
// micro-batches and ZeRO-1 by coordinate descent on the whole plan, train calls recomputing activations as
// in the co-located preset: a fixed plan class such as ReaLHF's `pipe_model` allocation (tp = a node's
// devices, pp = the nodes, dp = 1). Empty when some call has no strategy in that layout. The plan may not
// fit in memory: check its score.
std::optional<ExecutionPlan> one_layout_plan(const DataflowGraph& graph, const Cluster& cluster,
                                             PlanEvaluator& evaluator, const Layout& layout,
                                             bool runtime_limits = false);

// With staleness (graph/call_schedule.h): generation and the calls that run ahead of training (the
// reference's and reward model's inference) on one part of the cluster, the other calls on the rest, over the
// same splits as the disaggregated preset; on shared devices a step runs the calls ahead first, so the
// training devices would otherwise wait for the next iteration's generation. A start for the search, not a
// preset.
std::optional<ExecutionPlan> asynchronous_split(const DataflowGraph& graph, const Cluster& cluster,
                                                PlanEvaluator& evaluator, bool runtime_limits = false);

// Disjoint valid meshes covering as much of the cluster as possible, largest first, by repeatedly halving the
// largest piece (runs of whole nodes first, then power-of-two slices of a node).
std::vector<DeviceMesh> split_cluster(const Cluster& cluster, int parts);

}  // namespace realign
