// What `realign train` says at the end of a local multi-worker run: the plan each call ran with, and the
// measured seconds per iteration beside the estimate, for the run's plan and for the co-located preset (a few
// iterations of it measured in a side run), with the parameter bytes reallocated per iteration.
#pragma once

#include <string>
#include <vector>

#include "apps/plan_report.h"
#include "core/json.h"

namespace realign::apps {

// Per-iteration figures of a run's RL steps (metrics.jsonl records with "stage": "rl"), its first step left
// out as a warm-up: the median of time/step_s and the mean of realloc/bytes. `steps` is 0 without RL steps.
struct MeasuredIterations {
  int steps = 0;
  double seconds = 0;
  double realloc_bytes = 0;
};
MeasuredIterations measure_iterations(const std::vector<Json>& metrics);

struct PlanMeasurement {
  std::string label;  // "searched plan", "co-located preset"
  double estimated_s = 0;
  double estimated_realloc_bytes = 0;
  MeasuredIterations measured;
};

std::string format_run_summary(const PlanReport& report, const std::vector<PlanMeasurement>& rows);

}  // namespace realign::apps
