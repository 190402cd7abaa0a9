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

// How alike the measurement ranks the plans from one round to another: Kendall's tau between the plans'
// times of every two rounds. Where plans lie closer together than a round's noise, the rounds disagree, and
// no estimate can rank them better against the pooled measurement than the rounds rank one another. So the
// estimate is also scored on the pairs of plans that every round orders alike.
struct RoundAgreement {
  int pairs = 0;  // pairs of rounds; 0 with fewer than 2 rounds
  double min = 0, median = 0, max = 0;
  int resolved_pairs = 0;   // pairs of plans every round orders alike
  int estimate_agrees = 0;  // of those, the pairs the estimate orders alike too
};
// `times[r][i]`: plan i's time in round r, every round over the same plans; `estimated[i]`: plan i's
// estimate.
RoundAgreement round_agreement(const std::vector<std::vector<double>>& times,
                               const std::vector<double>& estimated);

}  // namespace realign::apps
