#include "apps/staleness_comparison.h"

#include <algorithm>
#include <chrono>

#include "cost/simulator.h"
#include "search/simulator_evaluator.h"

namespace realign::apps {
namespace {

bool same_calls(const DataflowGraph& graph, const ExecutionPlan& plan) {
  if (plan.assignments.size() != graph.mfcs.size()) return false;
  for (size_t i = 0; i < graph.mfcs.size(); ++i)
    if (plan.assignments[i].mfc != graph.mfcs[i].name) return false;
  return true;
}

}  // namespace

bool takes_staleness(const RunConfig& config) { return is_rl(config.algorithm.algorithm); }

StalenessVariant own_variant(const RunConfig& config) {
  return {config.algorithm.staleness, config.algorithm.partial_rollout && config.algorithm.staleness > 0};
}

std::vector<StalenessVariant> compared_variants(const RunConfig& config) {
  std::vector<StalenessVariant> out;
  // Streaming only differs where there is a tail to hide.
  const bool streams = config.algorithm.batching == Batching::kContinuous &&
                       !config.algorithm.batch.gen_lengths.quantiles.empty() &&
                       !config.algorithm.batch.gen_lengths.fixed();
  const StalenessVariant own = own_variant(config);
  for (int64_t n : kComparedStaleness) {
    out.push_back({n, false});
    if (n > 0 && (streams || own == StalenessVariant{n, true})) out.push_back({n, true});
  }
  if (std::find(out.begin(), out.end(), own) == out.end()) out.push_back(own);
  return out;
}

std::vector<StalenessEstimate> compare_staleness(const RunConfig& config, const PlanOptions& options,
                                                 const ExecutionPlan& chosen, double chosen_time_s,
                                                 bool chosen_fits, const StepPhases& chosen_phases,
                                                 const std::vector<ExecutionPlan>& presets,
                                                 double min_search_s) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<StalenessEstimate> out;
  if (!takes_staleness(config)) return out;
  const HardwareProfile profile = run_profile(config);
  // Every plan found so far is a start for the next search (a plan for staleness 1 is often near the best
  // for 2, and the reverse).
  std::vector<ExecutionPlan> found = {chosen};
  const StalenessVariant own = own_variant(config);
  const std::vector<StalenessVariant> variants = compared_variants(config);
  int64_t to_plan =
      int64_t(variants.size()) - (std::find(variants.begin(), variants.end(), own) != variants.end());
  for (const StalenessVariant& v : variants) {
    const int64_t n = v.staleness;
    if (v == own) {
      out.push_back(StalenessEstimate{n, v.partial_rollout, chosen_time_s, chosen_fits, true, chosen_phases});
      continue;
    }
    const double left = options.search.time_budget_s -
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double share = std::max(0.0, left) / double(to_plan--);
    if (options.mode != "file" && (share <= 0 || share < min_search_s)) {
      StalenessEstimate skipped;
      skipped.staleness = n;
      skipped.partial_rollout = v.partial_rollout;
      skipped.skipped = true;
      out.push_back(skipped);
      continue;
    }
    // The same config at staleness n: the graph differs (with n > 0 the generation gives the behaviour
    // log-probs and actor_inf the proximal ones; partial rollouts price generation), so it is built again.
    AlgorithmConfig algorithm = config.algorithm;
    algorithm.staleness = n;
    algorithm.partial_rollout = v.partial_rollout;
    const DataflowGraph graph = build_graph(algorithm);
    Simulator simulator(graph, config.cluster, profile);
    SimulatorEvaluator evaluator(simulator);
    StalenessEstimate e;
    e.staleness = n;
    e.partial_rollout = v.partial_rollout;
    if (options.mode == "file") {
      if (!same_calls(graph, chosen)) continue;
      const SimulationResult r = simulator.run(chosen);
      e.iteration_time_s = r.iteration_time_s;
      e.fits = r.fits;
      e.phases = step_phases(simulator, chosen, r);
    } else {
      PlanOptions o = options;
      o.search.time_budget_s = share;
      // The starts in the order plan_iteration would take them: presets, then the plans found before.
      if (o.mode == "search") {
        o.form_presets = false;
        for (const ExecutionPlan& p : presets)
          if (same_calls(graph, p)) o.starts.push_back(p);
      }
      for (const ExecutionPlan& f : found)
        if (same_calls(graph, f)) o.starts.push_back(f);
      const PlannerOutput p = plan_iteration(graph, config.cluster, evaluator, o);
      found.push_back(p.plan);
      e.iteration_time_s = p.score.time_s;
      e.fits = p.score.fits();
      e.phases = step_phases(simulator, p.plan, simulator.run(p.plan));
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace realign::apps
