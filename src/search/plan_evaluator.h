// PlanEvaluator: how the search sees costs. The search never looks inside the cost model; its tests use a
// fake evaluator with hand-set costs, so they check the search, not the model.
#pragma once

#include <string>

#include "plan/execution_plan.h"

namespace realign {

struct PlanScore {
  double time_s = 0;           // estimated iteration (or call) time
  double overflow_bytes = 0;   // memory needed beyond the limit on the worst device; 0 = fits
  double memory_bytes = 0;     // memory needed on the worst device
  bool fits() const { return overflow_bytes <= 0; }
};

class PlanEvaluator {
 public:
  virtual ~PlanEvaluator() = default;
  // The whole plan: reallocation, data moves, waiting and memory of every device.
  virtual PlanScore evaluate(const ExecutionPlan& plan) = 0;
  // One call alone under one assignment (no reallocation or waiting): used to prune and rank candidates.
  virtual PlanScore evaluate_call(int mfc, const MfcAssignment& assignment) = 0;
};

}  // namespace realign
