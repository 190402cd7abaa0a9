// Exhaustive search over the product of the candidate lists: the reference the MCMC is checked against on
// small spaces.
#pragma once

#include <optional>

#include "search/mcmc.h"

namespace realign {

// Empty when the space has more than `max_plans` plans.
std::optional<SearchResult> exhaustive_search(const DataflowGraph& graph,
                                              const std::vector<std::vector<MfcAssignment>>& candidates,
                                              PlanEvaluator& evaluator, int64_t max_plans = 10'000'000);

}  // namespace realign
