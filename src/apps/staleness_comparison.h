// The trade of asynchronous RL before a user chooses it: the best plan's estimated time per iteration at
// train.staleness 0, 1 and 2 (issue 26), for algorithms that generate (ppo, grpo, remax).
#pragma once

#include <cstdint>
#include <vector>

#include "apps/run_config.h"
#include "apps/step_phases.h"
#include "search/planner.h"

namespace realign::apps {

struct StalenessEstimate {
  int64_t staleness = 0;
  // Streaming generation (train.partial_rollout): compared beside batch-level asynchrony where generation is
  // planned as serving engines run it (continuous batching), the mode that keeps their batch full.
  bool partial_rollout = false;
  double iteration_time_s = 0;  // the simulator's steady state for that staleness
  bool fits = false;
  bool chosen = false;  // the config's own staleness: the plan `realign plan` prints
  StepPhases phases;    // of its best plan, for the reason it wins or loses
  // Not planned: the time budget left was less than a search of this cluster takes to start (its candidates),
  // so planning it would have overrun plan.time_budget_s. The other fields are unset.
  bool skipped = false;
};

// The staleness values compared.
constexpr int64_t kComparedStaleness[] = {0, 1, 2};

// What is compared for `config`: each compared staleness, and for each above 0 also with partial rollouts
// where generation batches continuously (a GPU cluster) and lengths vary. The config's own is among them.
struct StalenessVariant {
  int64_t staleness = 0;
  bool partial_rollout = false;
  bool operator==(const StalenessVariant& o) const {
    return staleness == o.staleness && partial_rollout == o.partial_rollout;
  }
};
std::vector<StalenessVariant> compared_variants(const RunConfig& config);
// The config's own: train.staleness, and train.partial_rollout where the staleness takes it.
StalenessVariant own_variant(const RunConfig& config);

// Whether the config's algorithm takes train.staleness (and so gets a comparison).
bool takes_staleness(const RunConfig& config);

// The share of plan.time_budget_s the config's own staleness gets when the comparison runs; the other
// compared variants share what is left when it is done, each the rest of the time left over the variants
// still to plan (so the searches together keep to the budget).
constexpr double kChosenBudgetShare = 0.5;

// Plans the config at each compared staleness other than its own with `options` (its time budget the time
// left for all of them together; each search gets its share of what is still left when it starts, and a
// variant whose share is below `min_search_s`, the time a search of this cluster takes before its chain
// starts, is left unplanned and marked skipped), starting also from `chosen` (the plan found for the config's own staleness) where
// its calls match; `chosen_time_s`/`chosen_fits`/`chosen_phases` give the config's own entry. In search mode these searches
// start from `presets` (the config's, formed once for its own staleness) rather than forming them again,
// which at 1,024 devices would take most of their share. In file mode the file's plan is evaluated as is for
// each staleness whose graph has the same calls (others are left out).
std::vector<StalenessEstimate> compare_staleness(const RunConfig& config, const PlanOptions& options,
                                                 const ExecutionPlan& chosen, double chosen_time_s,
                                                 bool chosen_fits, const StepPhases& chosen_phases,
                                                 const std::vector<ExecutionPlan>& presets = {},
                                                 double min_search_s = 0);

}  // namespace realign::apps
