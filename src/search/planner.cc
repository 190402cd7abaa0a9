#include "search/planner.h"

#include <algorithm>
#include <chrono>

#include "plan/execution_plan.h"
#include "search/presets.h"

namespace realign {

namespace {

// A budget past this (11.6 days) is not a budget; and the clock's arithmetic stays finite.
constexpr double kMaxTimeBudgetS = 1e6;
// Strategies kept per mesh size: past any mesh size's Pareto front, and an int.
constexpr int64_t kMaxStrategiesPerMeshSize = 4096;

}  // namespace

PlanOptions plan_options_from_json(const Json& section, const std::string& path) {
  ObjectReader r(section, path);
  PlanOptions o;
  o.mode = r.get_string("mode", o.mode);
  bool known = o.mode == "search" || o.mode == "file";
  for (const auto& p : preset_names()) known |= o.mode == p;
  if (!known)
    throw Error(r.path_of("mode"),
                "unknown mode '" + o.mode +
                    "'; choose search, file, co-located, heuristic, interleaving or disaggregated");
  o.file = r.get_string("file", "");
  if (o.mode == "file" && o.file.empty()) throw Error(r.path_of("file"), "mode 'file' needs the plan's path");
  const int64_t seed = r.get_int("seed", int64_t(o.search.seed));
  if (seed < 0) throw Error(r.path_of("seed"), "must be 0 or more, got " + std::to_string(seed));
  o.search.seed = uint64_t(seed);
  o.search.time_budget_s = r.get_double("time_budget_s", o.search.time_budget_s);
  if (!(o.search.time_budget_s > 0 && o.search.time_budget_s <= kMaxTimeBudgetS))
    throw Error(r.path_of("time_budget_s"),
                "must be in (0, 1e6] seconds, got " + Json(o.search.time_budget_s).dump());
  o.search.max_steps = r.get_positive("max_steps", o.search.max_steps);
  o.candidates.strategies_per_mesh_size = int(r.get_int_in(
      "strategies_per_mesh_size", 1, kMaxStrategiesPerMeshSize, o.candidates.strategies_per_mesh_size));
  if (const Json* d = r.find("disjoint")) o.search.disjoint = disjoint_from_json(*d, r.path_of("disjoint"));
  if (const Json* v = r.find("objective")) o.objective = objective_from_json(*v, r.path_of("objective"));
  if (const Json* f = r.find("frontier")) o.frontier = frontier_options_from_json(*f, r.path_of("frontier"));
  r.finish();
  return o;
}

namespace {

// The first runtime limit a plan breaks, or empty.
std::string runtime_problem(const DataflowGraph& graph, const ExecutionPlan& plan) {
  for (const auto& a : plan.assignments)
    if (std::string why = runtime_limit_problem(graph, a); !why.empty()) return why;
  return "";
}

}  // namespace

PlannerOutput plan_iteration(const DataflowGraph& graph, const Cluster& cluster, PlanEvaluator& evaluator,
                             const PlanOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // A plan for the runtime (a training run) needs models the runtime builds.
  if (options.candidates.runtime_limits)
    if (auto problem = runtime_model_problem(graph)) throw Error(problem->field, problem->why);
  // Check the constraints name real calls before any work.
  for (size_t g = 0; g < options.search.disjoint.size(); ++g)
    for (size_t k = 0; k < options.search.disjoint[g].size(); ++k)
      if (graph.mfc_index(options.search.disjoint[g][k]) < 0)
        throw Error("plan.disjoint[" + std::to_string(g) + "][" + std::to_string(k) + "]",
                    "no call named '" + options.search.disjoint[g][k] + "'");

  PlannerOutput out;
  std::vector<ExecutionPlan> starts;
  for (const auto& name : preset_names()) {
    if (!options.form_presets) break;
    PresetOutcome p;
    p.name = name;
    p.plan = make_preset(name, graph, cluster, evaluator, options.candidates.runtime_limits);
    if (p.plan) {
      p.score = evaluator.evaluate(*p.plan);
      if (!breaks_disjoint(graph, *p.plan, options.search.disjoint) &&
          (!options.candidates.runtime_limits || runtime_problem(graph, *p.plan).empty()))
        starts.push_back(*p.plan);
    }
    out.presets.push_back(p);
  }
  std::vector<ExecutionPlan> extra = options.starts;
  if (graph.staleness > 0)
    if (auto split = asynchronous_split(graph, cluster, evaluator, options.candidates.runtime_limits))
      extra.push_back(*split);
  for (const ExecutionPlan& s : extra) {
    bool same = s.assignments.size() == graph.mfcs.size();
    for (size_t i = 0; same && i < graph.mfcs.size(); ++i) same = s.assignments[i].mfc == graph.mfcs[i].name;
    if (same && !breaks_disjoint(graph, s, options.search.disjoint) &&
        (!options.candidates.runtime_limits || runtime_problem(graph, s).empty()))
      starts.push_back(s);
  }

  if (options.mode == "search") {
    const auto candidates = build_candidates(graph, cluster, evaluator, options.candidates);
    // The time budget covers the whole pipeline: the chain gets what the presets and candidates left over.
    SearchOptions chain = options.search;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    chain.time_budget_s = std::max(0.0, options.search.time_budget_s - spent);
    out.search = mcmc_search(graph, candidates, evaluator, starts, chain);
    out.plan = out.search->plan;
  } else if (options.mode == "file") {
    out.plan = load_plan_file(options.file);
  } else {
    bool found = false;
    for (const auto& p : out.presets)
      if (p.name == options.mode && p.plan) {
        out.plan = *p.plan;
        found = true;
      }
    if (!found)
      throw Error("plan.mode", "the " + options.mode + " placement cannot be formed on this cluster");
  }
  ExecutionPlan checked = out.plan;
  checked.disjoint.insert(checked.disjoint.end(), options.search.disjoint.begin(),
                          options.search.disjoint.end());
  validate_plan(graph, cluster, checked, options.mode == "file" ? options.file : "plan");
  out.plan.assignments = checked.assignments;
  out.score = evaluator.evaluate(out.plan);
  out.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace realign
