#include "engines/engine_search.h"

#include <algorithm>
#include <chrono>

#include "core/check.h"
#include "search/tied_calls.h"

namespace realign::engines {

namespace {

// One placement's candidate lists with the engine's filters, tied calls aligned; empty when some call has
// none there.
std::vector<std::vector<MfcAssignment>> placement_candidates(const Engine& engine, const DataflowGraph& graph,
                                                             const Cluster& cluster,
                                                             EngineEvaluator& evaluator,
                                                             const PlanOptions& options,
                                                             const Placement& placement) {
  CandidateOptions c = options.candidates;
  // Meshes are fixed, so keep more strategies per call than realign's own search does.
  c.strategies_per_mesh_size = std::max(c.strategies_per_mesh_size, 8);
  // Every engine generates on a serving engine that bounds its batch by its KV cache.
  c.generation_waves = true;
  c.mesh_filter = [&](size_t call, const DeviceMesh& m) {
    return m == placement.meshes[call] ? std::string() : std::string("not this placement's mesh");
  };
  c.strategy_filter = [&](size_t call, int size, const Strategy& s) {
    return engine.strategy_problem(graph, placement, call, size, s);
  };
  evaluator.set_placement_options(placement.options);
  auto candidates = build_candidates(graph, cluster, evaluator, c);
  tie_candidates(graph, cluster, evaluator, engine.tied(graph), c, candidates);
  if (std::any_of(candidates.begin(), candidates.end(), [](const auto& l) { return l.empty(); })) return {};
  return candidates;
}

struct Scouted {
  size_t placement = 0;
  ExecutionPlan plan;
  double value = 0;
};

// A quick look at a placement: each call's first candidate (fitting on its own, fastest), then one round of
// coordinate descent over the calls that move on their own (followers move with their leader).
Scouted scout(const DataflowGraph& graph, const std::vector<std::vector<MfcAssignment>>& candidates,
              const std::vector<std::vector<std::string>>& tied, PlanEvaluator& evaluator,
              int64_t& evaluations) {
  const size_t n = graph.mfcs.size();
  std::vector<size_t> leader(n);
  for (size_t i = 0; i < n; ++i) leader[i] = i;
  for (const auto& group : tied)
    for (size_t k = 1; k < group.size(); ++k)
      leader[size_t(graph.mfc_index(group[k]))] = size_t(graph.mfc_index(group[0]));
  Scouted s;
  for (size_t i = 0; i < n; ++i) s.plan.assignments.push_back(candidates[i][0]);
  s.value = search_objective(evaluator.evaluate(s.plan));
  ++evaluations;
  for (size_t i = 0; i < n; ++i) {
    if (leader[i] != i) continue;
    for (size_t k = 1; k < std::min<size_t>(candidates[i].size(), 12); ++k) {
      ExecutionPlan trial = s.plan;
      for (size_t j = 0; j < n; ++j)
        if (leader[j] == i) trial.assignments[j] = candidates[j][k];
      const double v = search_objective(evaluator.evaluate(trial));
      ++evaluations;
      if (v < s.value) s.value = v, s.plan = trial;
    }
  }
  return s;
}

}  // namespace

EngineSearchResult search_engine_plan(const Engine& engine, const DataflowGraph& graph,
                                      const Cluster& cluster, EngineEvaluator& evaluator,
                                      const PlanOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  engine.check_graph(graph, cluster);
  const std::vector<Placement> placements = engine.placements(graph, cluster);
  const auto tied = engine.tied(graph);
  EngineSearchResult out;
  // First a quick look at every placement, then the MCMC chain on the most promising few, from where the
  // look left them.
  std::vector<Scouted> scouted;
  for (size_t p = 0; p < placements.size(); ++p) {
    const auto candidates = placement_candidates(engine, graph, cluster, evaluator, options, placements[p]);
    if (candidates.empty()) continue;
    Scouted s = scout(graph, candidates, tied, evaluator, out.evaluations);
    s.placement = p;
    scouted.push_back(std::move(s));
  }
  out.placements = int(scouted.size());
  std::stable_sort(scouted.begin(), scouted.end(),
                   [](const Scouted& a, const Scouted& b) { return a.value < b.value; });
  const size_t chains = std::min<size_t>(scouted.size(), 4);
  double best = 0;
  for (size_t k = 0; k < chains; ++k) {
    const Placement& placement = placements[scouted[k].placement];
    const auto candidates = placement_candidates(engine, graph, cluster, evaluator, options, placement);
    SearchOptions s = options.search;
    s.tied = tied;
    s.offload = engine.can_offload();
    s.time_budget_s = std::max(0.0, options.search.time_budget_s - elapsed()) / double(chains - k);
    s.max_steps = std::max<int64_t>(1000, options.search.max_steps / int64_t(chains));
    SearchResult r = mcmc_search(graph, candidates, evaluator, {scouted[k].plan}, s);
    out.steps += r.steps;
    out.evaluations += r.evaluations;
    const double value = search_objective(r.score);
    if (!out.plan || value < best) {
      best = value;
      r.plan.name = engine.name() + ": " + placement.name;
      out.plan = r.plan;
      out.placement = placement;
      out.score = r.score;
    }
  }
  if (out.plan) {
    out.plan = as_engine_runs(*out.plan, graph, engine.pricing(graph));
    const std::string why = can_run(engine, graph, cluster, *out.plan);
    REALIGN_CHECK(why.empty()) << "the engine search proposed a plan " << engine.name()
                               << " cannot run: " << why;
    evaluator.set_placement_options(out.placement.options);
  }
  out.seconds = elapsed();
  return out;
}

}  // namespace realign::engines
