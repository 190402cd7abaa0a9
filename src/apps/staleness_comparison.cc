#include "apps/staleness_comparison.h"

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

std::vector<StalenessEstimate> compare_staleness(const RunConfig& config, const PlanOptions& options,
                                                 const ExecutionPlan& chosen, double chosen_time_s,
                                                 bool chosen_fits,
                                                 const std::vector<ExecutionPlan>& presets) {
  std::vector<StalenessEstimate> out;
  if (!takes_staleness(config)) return out;
  const HardwareProfile profile = run_profile(config);
  // Every plan found so far is a start for the next search (a plan for staleness 1 is often near the best
  // for 2, and the reverse).
  std::vector<ExecutionPlan> found = {chosen};
  for (int64_t n : kComparedStaleness) {
    if (n == config.algorithm.staleness) {
      out.push_back(StalenessEstimate{n, chosen_time_s, chosen_fits, true});
      continue;
    }
    // The same config at staleness n: the graph differs (with n > 0 the generation gives the behaviour
    // log-probs and actor_inf the proximal ones), so it is built again.
    AlgorithmConfig algorithm = config.algorithm;
    algorithm.staleness = n;
    const DataflowGraph graph = build_graph(algorithm);
    Simulator simulator(graph, config.cluster, profile);
    SimulatorEvaluator evaluator(simulator);
    StalenessEstimate e;
    e.staleness = n;
    if (options.mode == "file") {
      if (!same_calls(graph, chosen)) continue;
      const SimulationResult r = simulator.run(chosen);
      e.iteration_time_s = r.iteration_time_s;
      e.fits = r.fits;
    } else {
      PlanOptions o = options;
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
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace realign::apps
