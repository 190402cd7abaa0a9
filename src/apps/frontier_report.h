// `realign plan CONFIG --frontier`: the workload planned at several cluster sizes (search/frontier.h), as
// realign runs it or, with an engine, as that engine can; its time / GPU-hour trade and the point
// plan.objective picks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/run_config.h"
#include "search/frontier.h"

namespace realign::apps {

// The frontier's time budget, as a multiple of plan.time_budget_s, shared equally over its sizes.
constexpr double kFrontierBudgetFactor = 3.0;
// The default sizes (a quarter to four times the config's), and how far they go on doubling while fewer
// than kMinFittingSizes have a plan that fits.
constexpr size_t kDefaultSizes = 5;
constexpr size_t kMaxExtraSizes = 2;
constexpr int64_t kMinFittingSizes = 4;

struct FrontierReport {
  const RunConfig* config = nullptr;
  std::string engine;  // empty: realign's own plans
  bool within_cluster = false;  // only sizes up to the config's (an objective's choice on the cluster held)
  Objective objective;
  double budget_s = 0, seconds = 0;  // the budget shared over the sizes, and the wall time taken
  std::vector<FrontierPoint> points;   // by size
  std::vector<std::string> problems;   // parallel: why a size has no fitting plan (empty when it has one)
  std::optional<size_t> chosen;        // the objective's point
};

// Plans `config`'s workload at each frontier size (plan.frontier, else a quarter to four times its own; with
// `within_cluster` only those up to its own: what a user holding that cluster can choose from), at its
// staleness, each search with an equal share of kFrontierBudgetFactor x plan.time_budget_s; with `engine`,
// the engine's best plan at each size (its rules and pricing).
FrontierReport make_frontier_report(const RunConfig& config, const std::string& engine = "",
                                    bool within_cluster = false);

std::string format_frontier(const FrontierReport& report);
Json frontier_json(const FrontierReport& report);

}  // namespace realign::apps
