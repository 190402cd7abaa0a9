// The engine-constrained search: for each of the engine's placements, the same candidates, ties and MCMC as
// realign's own search, with the engine's rules as a filter on proposals; the best plan over all placements.
#pragma once

#include <optional>
#include <string>

#include "engines/pricing.h"
#include "search/planner.h"

namespace realign::engines {

struct EngineSearchResult {
  std::optional<ExecutionPlan> plan;  // empty when no placement has a strategy for every call
  Placement placement;
  PlanScore score;
  int placements = 0;  // placements searched
  int64_t steps = 0;
  int64_t evaluations = 0;
  double seconds = 0;
};

// `options`: the config's plan section (seed, time budget, steps, strategies per mesh size, disjoint); the
// time budget and steps are shared out: a quick look at every placement, then MCMC chains on the best four.
// The plan returned is one `engine` can run (can_run), fitting in memory if any plan found does. The
// evaluator is left set to its placement's options.
EngineSearchResult search_engine_plan(const Engine& engine, const DataflowGraph& graph,
                                      const Cluster& cluster, EngineEvaluator& evaluator,
                                      const PlanOptions& options);

}  // namespace realign::engines
