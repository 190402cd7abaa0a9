// MCMC search over execution plans: each move reassigns one call's (mesh, strategy) among its candidates; a
// Metropolis rule on the simulated iteration time (with a penalty for memory overflow) accepts or rejects it.
// Seeded: with the same seed and step count the chain repeats exactly; the time budget only caps it.
#pragma once

#include <cstdint>
#include <vector>

#include "search/plan_evaluator.h"

namespace realign {

struct SearchOptions {
  uint64_t seed = 1;
  double time_budget_s = 5.0;    // wall-clock cap
  int64_t max_steps = 200000;    // step cap (set both for exact repetition: whichever comes first)
  double temperature = 0.02;     // relative: a move 2% worse is accepted with probability 1/e
  int64_t restart_every = 5000;  // steps without improving the chain: restart, alternately from the best plan
                                 // found and from each start in turn
  // Groups of calls whose meshes must not overlap (plan.disjoint); moves that break them are rejected.
  std::vector<std::vector<std::string>> disjoint;
  // Whether the chain may keep never-trained models in host memory between their calls (plan.offload).
  bool offload = true;
  // Groups of calls that move together (an engine that runs them in one worker, in one layout): the first
  // call of a group leads, the others follow it. Their candidate lists must be aligned (tie_candidates): a
  // move gives every call of the group the candidate of the same index.
  std::vector<std::vector<std::string>> tied;
};

struct SearchResult {
  ExecutionPlan plan;
  PlanScore score;
  int64_t steps = 0;
  // The step after which the result last improved (0: no step beat the best start). Far below `steps`, the
  // chain spent the rest of its budget, restarts included, without finding better: it had converged.
  int64_t best_step = 0;
  int64_t accepted = 0;
  int64_t evaluations = 0;  // plans simulated (a plan the chain proposes again is scored from memory)
  double seconds = 0;
};

// The candidate lists come from build_candidates. `starts` are plans to begin from (e.g. the presets; their
// calls must be in the graph's order); the chain starts from the best of them, or from each call's fastest
// standalone candidate. The result is never worse than the best start.
SearchResult mcmc_search(const DataflowGraph& graph,
                         const std::vector<std::vector<MfcAssignment>>& candidates, PlanEvaluator& evaluator,
                         const std::vector<ExecutionPlan>& starts, const SearchOptions& options);

// True when two calls of one disjoint group share a device.
bool breaks_disjoint(const DataflowGraph& graph, const ExecutionPlan& plan,
                     const std::vector<std::vector<std::string>>& disjoint);

// Scalar objective: time when the plan fits; otherwise far worse than any fitting plan, decreasing with the
// overflow, so the chain is guided back into memory.
double search_objective(const PlanScore& score);

}  // namespace realign
