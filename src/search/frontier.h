// The time / GPU-hour frontier of a workload: the best plan at each of several cluster sizes, which of them no
// other point beats on both time and GPU-hours (the Pareto set), the knee past which more GPUs buy little
// time, and the point a plan.objective picks. Pure: the plans come from a callback (apps/frontier_report.h
// runs the planner per size), so tests give hand-set times.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "plan/cluster.h"

namespace realign {

// What `realign plan` optimises: the iteration time (today's), the GPU-hours of an iteration, or the fewest
// GPU-hours among plans within `time_within` x the fastest (a deadline relative to the best time).
struct Objective {
  enum class Kind { kTime, kGpuHours, kTimeWithin } kind = Kind::kTime;
  double time_within = 0;  // kTimeWithin: > 1
  bool operator==(const Objective& o) const { return kind == o.kind && time_within == o.time_within; }
};

// plan.objective: "time" | "gpu_hours" | {time_within: 1.2}. Errors name `path`.
Objective objective_from_json(const Json& value, const std::string& path);
std::string to_string(const Objective& o);  // "time", "gpu_hours", "time_within 1.2"

struct FrontierOptions {
  std::vector<int64_t> nodes;    // plan.frontier.nodes: explicit sizes in whole nodes of the config's kind
  std::vector<int64_t> devices;  // plan.frontier.devices: explicit sizes in devices
  // The knee: the last point reached while each step to a faster point cut the time by at least this share
  // of the GPU-hours' relative growth ((dt / t) / (dh / h) >= knee_gain).
  double knee_gain = 0.5;
};

// plan.frontier: {nodes: [..], devices: [..], knee_gain: 0.5}. Errors name `path`.
FrontierOptions frontier_options_from_json(const Json& section, const std::string& path);

// The sizes (in devices) a frontier plans: the explicit list, or the config's size with its halves and
// doubles, a quarter to four times it. A size below a node is one node of that many devices; above, whole
// nodes. Sizes the cluster cannot take (not whole nodes) are refused naming the field.
std::vector<int64_t> frontier_sizes(const Cluster& cluster, const FrontierOptions& options);

// The cluster of `devices` devices in the config's node kind.
Cluster cluster_of_size(const Cluster& cluster, int64_t devices);

struct FrontierPoint {
  int64_t devices = 0;
  bool fits = false;
  double iteration_time_s = 0;
  double gpu_hours_per_iteration = 0;   // devices x time / 3600
  double gpu_hours_per_1k_samples = 0;  // per 1,000 sequences generated (or trained on)
  double idle_share = 0;                // the devices' mean share of the step outside any call or move
  int64_t staleness = 0;
  std::string layout;  // each call's layout, "actor_gen d8t1p1@0, actor_train d4t2p1@8, ..."
  // Set by mark_frontier / choose_point:
  bool pareto = false;   // no other fitting point is at least as fast and as cheap, and better in one
  bool knee = false;
  bool config_size = false;
  bool chosen = false;   // the objective's pick
};

// Fills gpu_hours_* from devices, time and the samples an iteration takes.
void price_point(FrontierPoint& p, int64_t samples_per_iteration);

// Marks the Pareto set and the knee among the fitting points (sorted by devices).
void mark_frontier(std::vector<FrontierPoint>& points, double knee_gain);

// The point `objective` picks among the fitting ones (marked chosen), or nullopt when none fits.
std::optional<size_t> choose_point(std::vector<FrontierPoint>& points, const Objective& objective);

}  // namespace realign
