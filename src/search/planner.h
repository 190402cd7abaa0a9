// The planning pipeline shared by `realign plan`, `realign train` and the benchmarks: evaluate every preset,
// then (in search mode) run the MCMC search from the best of them; or take a preset or a plan file as given.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/candidates.h"
#include "search/frontier.h"
#include "search/mcmc.h"

namespace realign {

struct PlanOptions {
  std::string mode = "search";  // search | co-located | heuristic | interleaving | disaggregated | file
  std::string file;             // the plan file, for mode "file"
  SearchOptions search;         // its time budget covers the whole pipeline, presets and candidates included
  CandidateOptions candidates;
  // More plans the search may start from besides the presets (e.g. the best plan found for another
  // staleness); one whose calls are not the graph's, in its order, is skipped.
  std::vector<ExecutionPlan> starts;
  // Whether to form and score the presets (PlannerOutput::presets) and start from them. A second search of
  // the same config (the staleness comparison's) passes the presets formed once as `starts` instead: at 1,024
  // devices forming them takes most of a 2.5 s share.
  bool form_presets = true;
  // What the plan optimises across cluster sizes (the frontier, apps/frontier_report.h); one cluster's best
  // plan is its fastest whatever the objective.
  Objective objective;
  FrontierOptions frontier;
};

// The config's `plan` section: {mode, file, seed, time_budget_s, max_steps, strategies_per_mesh_size,
// disjoint, objective, frontier}. Errors name the field.
PlanOptions plan_options_from_json(const Json& section, const std::string& path);

struct PresetOutcome {
  std::string name;
  std::optional<ExecutionPlan> plan;  // empty when the preset cannot be formed on this cluster
  PlanScore score;
};

struct PlannerOutput {
  ExecutionPlan plan;
  PlanScore score;
  std::vector<PresetOutcome> presets;
  std::optional<SearchResult> search;  // set in search mode
  double planning_seconds = 0;         // wall time of the whole pipeline
};

// The chosen plan is validated against graph and cluster (a plan file with errors throws realign::Error).
PlannerOutput plan_iteration(const DataflowGraph& graph, const Cluster& cluster, PlanEvaluator& evaluator,
                             const PlanOptions& options);

}  // namespace realign
