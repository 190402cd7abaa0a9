#include "search/simulator_evaluator.h"

#include <algorithm>

namespace realign {

SimulatorEvaluator::SimulatorEvaluator(Simulator& simulator)
    : sim_(simulator),
      limit_(simulator.profile().memory_bytes.value * simulator.profile().usable_memory_fraction.value) {}

PlanScore SimulatorEvaluator::evaluate(const ExecutionPlan& plan) {
  const SimulationResult r = sim_.score(plan);
  PlanScore score;
  score.time_s = r.iteration_time_s;
  for (double peak : r.device_peak_mem_bytes) score.memory_bytes = std::max(score.memory_bytes, peak);
  score.overflow_bytes = std::max(0.0, score.memory_bytes - limit_);
  return score;
}

PlanScore SimulatorEvaluator::evaluate_call(int mfc, const MfcAssignment& assignment) {
  const CallEstimate& e = sim_.call_estimate(mfc, assignment);
  return PlanScore{e.time_s, std::max(0.0, e.memory.total() - limit_), e.memory.total()};
}

}  // namespace realign
