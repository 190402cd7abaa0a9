#include "search/exhaustive.h"

#include <chrono>

namespace realign {

std::optional<SearchResult> exhaustive_search(const DataflowGraph& graph,
                                              const std::vector<std::vector<MfcAssignment>>& candidates,
                                              PlanEvaluator& evaluator, int64_t max_plans) {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t total = 1;
  for (const auto& c : candidates) {
    if (c.empty()) return std::nullopt;
    if (total > max_plans / int64_t(c.size())) return std::nullopt;
    total *= int64_t(c.size());
  }
  const size_t n = graph.mfcs.size();
  std::vector<size_t> idx(n, 0);
  ExecutionPlan plan;
  plan.name = "exhaustive";
  for (size_t i = 0; i < n; ++i) plan.assignments.push_back(candidates[i][0]);
  SearchResult best;
  double best_value = 0;
  for (int64_t k = 0; k < total; ++k) {
    const PlanScore s = evaluator.evaluate(plan);
    ++best.evaluations;
    const double v = search_objective(s);
    if (k == 0 || v < best_value) {
      best_value = v;
      best.plan = plan;
      best.score = s;
    }
    // Odometer increment.
    for (size_t i = 0; i < n; ++i) {
      if (++idx[i] < candidates[i].size()) {
        plan.assignments[i] = candidates[i][idx[i]];
        break;
      }
      idx[i] = 0;
      plan.assignments[i] = candidates[i][0];
    }
  }
  best.steps = total;
  best.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return best;
}

}  // namespace realign
