// The trade of asynchronous RL before a user chooses it: the best plan's estimated time per iteration at
// train.staleness 0, 1 and 2 (issue 26), for algorithms that generate (ppo, grpo, remax).
#pragma once

#include <cstdint>
#include <vector>

#include "apps/run_config.h"
#include "search/planner.h"

namespace realign::apps {

struct StalenessEstimate {
  int64_t staleness = 0;
  double iteration_time_s = 0;  // the simulator's steady state for that staleness
  bool fits = false;
  bool chosen = false;  // the config's own staleness: the plan `realign plan` prints
};

// The staleness values compared.
constexpr int64_t kComparedStaleness[] = {0, 1, 2};

// Whether the config's algorithm takes train.staleness (and so gets a comparison).
bool takes_staleness(const RunConfig& config);

// The share of plan.time_budget_s the config's own staleness gets when the comparison runs; each other
// compared value gets half the rest (so the three searches together keep to the budget).
constexpr double kChosenBudgetShare = 0.5;

// Plans the config at each compared staleness other than its own with `options` (its time budget already cut
// to that search's share), starting also from `chosen` (the plan found for the config's own staleness) where
// its calls match; `chosen_time_s`/`chosen_fits` give the config's own entry. In search mode these searches
// start from `presets` (the config's, formed once for its own staleness) rather than forming them again,
// which at 1,024 devices would take most of their share. In file mode the file's plan is evaluated as is for
// each staleness whose graph has the same calls (others are left out).
std::vector<StalenessEstimate> compare_staleness(const RunConfig& config, const PlanOptions& options,
                                                 const ExecutionPlan& chosen, double chosen_time_s,
                                                 bool chosen_fits,
                                                 const std::vector<ExecutionPlan>& presets = {});

}  // namespace realign::apps
