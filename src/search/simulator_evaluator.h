// The search's view of the real cost model: a PlanEvaluator over cost::Simulator.
#pragma once

#include "cost/simulator.h"
#include "search/plan_evaluator.h"

namespace realign {

class SimulatorEvaluator : public PlanEvaluator {
 public:
  explicit SimulatorEvaluator(Simulator& simulator);
  PlanScore evaluate(const ExecutionPlan& plan) override;
  PlanScore evaluate_call(int mfc, const MfcAssignment& assignment) override;
  double memory_limit_bytes() const { return limit_; }

 private:
  Simulator& sim_;
  double limit_;
};

}  // namespace realign
