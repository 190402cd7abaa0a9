// What `realign plan` and `realign simulate` print: the plan as a table with every preset beside it, or one
// JSON object for scripts.
#pragma once

#include <string>

#include "apps/run_config.h"
#include "cost/simulation_result.h"
#include "search/planner.h"

namespace realign::apps {

struct PlanReport {
  const RunConfig* config = nullptr;
  std::string profile_name;
  PlannerOutput planner;
  SimulationResult simulation;  // of the chosen plan
  std::vector<SimulationResult> preset_simulations;  // parallel to planner.presets (empty result when absent)
};

// Plans (or, with `plan_file`, evaluates a given plan) and simulates the outcome and every preset.
PlanReport make_plan_report(const RunConfig& config, const std::string& plan_file);

std::string format_plan_table(const PlanReport& report);
Json plan_report_json(const PlanReport& report);

}  // namespace realign::apps
