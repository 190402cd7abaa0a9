// A run's config: the file (YAML/JSON) plus key=value overrides, read into the pieces the planner needs.
// Every top-level key is checked; a typo anywhere is an error naming the key.
#pragma once

#include <string>
#include <vector>

#include "cost/hardware_profile.h"
#include "graph/algorithms.h"
#include "plan/cluster.h"
#include "search/planner.h"
#include "train/train_config.h"

namespace realign::apps {

struct RunConfig {
  Json raw;  // the merged config, as it was read (saved next to a run's outputs)
  AlgorithmConfig algorithm;
  DataflowGraph graph;
  Cluster cluster;
  PlanOptions plan;
  std::string
      profile_path;  // a hardware profile from `realign profile`; empty = derived from the device spec
  train::TrainingSections
      training;  // `train`, `data`, `reward` (defaults when absent; used by `realign train`)
  // This machine's host probe time (profile/host_probe.h), measured by the commands that run the plan here
  // (`train`, `validate`); 0: not measured, as `plan` and `simulate` leave it (their figures do not depend
  // on the machine they are printed on). A CPU profile recording its own probe is scaled by it.
  double host_probe_s = 0;
};

RunConfig load_run_config(const std::string& file, const std::vector<std::string>& overrides);

// The hardware profile a run plans with: the config's `profile` file, else the one realign ships for its
// device (builtin_profile), else the device spec's defaults, carried to this machine where host_probe_s is
// measured (cost/host_scaling.h); and how to name it to a person.
HardwareProfile run_profile(const RunConfig& config);
std::string profile_name(const RunConfig& config);
RunConfig run_config_from_json(Json raw);

}  // namespace realign::apps
