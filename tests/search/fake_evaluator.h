// A fake evaluator with hand-set costs, so search tests check the search and not the cost model: each call has
// a fixed amount of work and memory; a plan's time comes from a tiny list scheduler with a fixed penalty when a
// model changes layout between two of its calls.
#pragma once

#include <algorithm>
#include <map>

#include "search/plan_evaluator.h"

namespace realign::testing {

class FakeEvaluator : public PlanEvaluator {
 public:
  FakeEvaluator(const DataflowGraph& graph, int n_devices, std::map<std::string, double> work,
                std::map<std::string, double> memory, double memory_limit, double realloc_penalty)
      : graph_(graph), n_devices_(n_devices), work_(std::move(work)), memory_(std::move(memory)),
        limit_(memory_limit), realloc_penalty_(realloc_penalty) {}

  PlanScore evaluate_call(int mfc, const MfcAssignment& a) override {
    const Strategy& s = a.strategy;
    const double bubble = double(s.pp - 1) / double(s.micro_batches + s.pp - 1);
    PlanScore score;
    score.time_s = work_.at(graph_.mfcs[mfc].name) / a.mesh.size * (1 + 0.15 * (s.tp - 1)) * (1 + bubble) +
                   0.01 * s.micro_batches + 0.02 * s.dp;
    score.memory_bytes = memory_.at(graph_.mfcs[mfc].name) / (s.tp * s.pp);
    score.overflow_bytes = std::max(0.0, score.memory_bytes - limit_);
    return score;
  }

  PlanScore evaluate(const ExecutionPlan& plan) override {
    std::vector<double> free(n_devices_, 0.0), end(plan.assignments.size(), 0.0);
    std::map<Role, const MfcAssignment*> last_layout;
    PlanScore total;
    for (size_t i = 0; i < plan.assignments.size(); ++i) {
      const MfcAssignment& a = plan.assignments[i];
      double start = 0;
      for (int p : graph_.parents(int(i))) start = std::max(start, end[p]);
      for (int d = a.mesh.first; d < a.mesh.end(); ++d) start = std::max(start, free[d]);
      const Role model = graph_.mfcs[i].model;
      auto it = last_layout.find(model);
      const bool moved = it != last_layout.end() &&
                         (it->second->mesh != a.mesh || it->second->strategy.tp != a.strategy.tp ||
                          it->second->strategy.pp != a.strategy.pp || it->second->strategy.dp != a.strategy.dp);
      const PlanScore call = evaluate_call(int(i), a);
      end[i] = start + call.time_s + (moved ? realloc_penalty_ : 0.0);
      for (int d = a.mesh.first; d < a.mesh.end(); ++d) free[d] = end[i];
      last_layout[model] = &a;
      total.time_s = std::max(total.time_s, end[i]);
      total.overflow_bytes = std::max(total.overflow_bytes, call.overflow_bytes);
      total.memory_bytes = std::max(total.memory_bytes, call.memory_bytes);
    }
    ++evaluations;
    return total;
  }

  int64_t evaluations = 0;

 private:
  const DataflowGraph& graph_;
  int n_devices_;
  std::map<std::string, double> work_, memory_;
  double limit_, realloc_penalty_;
};

}  // namespace realign::testing
