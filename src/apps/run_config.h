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
};

RunConfig load_run_config(const std::string& file, const std::vector<std::string>& overrides);

// The hardware profile a run plans with: the config's `profile` file, else the one realign ships for its
// device (builtin_profile), else the device spec's defaults; and how to name it to a person.
HardwareProfile run_profile(const RunConfig& config);
std::string profile_name(const RunConfig& config);
RunConfig run_config_from_json(Json raw);

}  // namespace realign::apps
