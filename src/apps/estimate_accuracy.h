// How accurate the cost model's estimates are, `realign validate`'s pure half (not validate_plan, which
// checks a plan is well formed): which plans to measure (the presets, then random valid plans that the
// runtime can execute), and how estimates are scored against measurements (relative error, Kendall's tau).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/run_config.h"
#include "cost/simulator.h"

namespace realign::apps {

struct PlanToMeasure {
  std::string name;  // "co-located", "random-3"
  ExecutionPlan plan;
};

// Up to `n` distinct plans: every preset, then the searched plan, then random ones (each call a random valid
// strategy on a random mesh), keeping those the runtime executes (runtime_limit_problem) and that fit in
// memory per the simulator.
std::vector<PlanToMeasure> plans_to_measure(const RunConfig& config, Simulator& simulator, int n,
                                            uint64_t seed);

// |estimate - measured| / measured.
double relative_error(double estimate, double measured);
double median(std::vector<double> values);
// Kendall's tau-b between two equally long sequences (ties counted as neither concordant nor discordant).
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace realign::apps
