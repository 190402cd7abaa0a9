// What `realign plan` and `realign simulate` print: the plan as a table with every preset beside it, or one
// JSON object for scripts.
#pragma once

#include <string>

#include "apps/run_config.h"
#include "apps/staleness_comparison.h"
#include "cost/simulation_result.h"
#include "search/planner.h"

namespace realign::apps {

struct PlanReport {
  const RunConfig* config = nullptr;
  std::string profile_name;
  PlannerOutput planner;
  SimulationResult simulation;                       // of the chosen plan
  StepPhases phases;                                 // of the chosen plan
  std::vector<SimulationResult> preset_simulations;  // parallel to planner.presets (empty result when absent)
  // The best plan's estimate at staleness 0, 1 and 2 (empty: not asked for, or an algorithm without it).
  std::vector<StalenessEstimate> staleness_estimates;
  double seconds = 0;        // wall time of make_plan_report, all of it
  double fixed_seconds = 0;  // of the chosen search, the part before its chain (presets, candidates)
};

// Plans (or, with `plan_file`, evaluates a given plan) and simulates the outcome and every preset. With
// `compare_staleness` (and an algorithm that takes train.staleness) also plans the config at the other
// compared staleness values: in search mode the config's own gets kChosenBudgetShare of the time budget
// and the others what it left, so the whole keeps to plan.time_budget_s; a variant the budget left no time
// for is marked skipped. Where the presets and candidates alone take longer than the budget (the largest
// clusters), the table says so.
PlanReport make_plan_report(const RunConfig& config, const std::string& plan_file,
                            bool compare_staleness = false);

std::string format_plan_table(const PlanReport& report);
Json plan_report_json(const PlanReport& report);

}  // namespace realign::apps
