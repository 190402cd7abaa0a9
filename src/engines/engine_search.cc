#include "engines/engine_search.h"

#include <algorithm>
#include <chrono>

#include "core/check.h"
#include "search/tied_calls.h"

namespace realign::engines {

EngineSearchResult search_engine_plan(const Engine& engine, const DataflowGraph& graph,
                                      const Cluster& cluster, PlanEvaluator& evaluator,
                                      const PlanOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  engine.check_graph(graph, cluster);
  const std::vector<Placement> placements = engine.placements(graph, cluster);
  const auto tied = engine.tied(graph);
  EngineSearchResult out;
  double best = 0;
  for (size_t p = 0; p < placements.size(); ++p) {
    const Placement& placement = placements[p];
    CandidateOptions c = options.candidates;
    // Meshes are fixed, so keep more strategies per call than realign's own search does.
    c.strategies_per_mesh_size = std::max(c.strategies_per_mesh_size, 8);
    c.mesh_filter = [&](size_t call, const DeviceMesh& m) {
      return m == placement.meshes[call] ? std::string() : std::string("not this placement's mesh");
    };
    c.strategy_filter = [&](size_t call, int size, const Strategy& s) {
      return engine.strategy_problem(graph, placement, call, size, s);
    };
    auto candidates = build_candidates(graph, cluster, evaluator, c);
    tie_candidates(graph, cluster, evaluator, tied, c, candidates);
    if (std::any_of(candidates.begin(), candidates.end(), [](const auto& l) { return l.empty(); })) continue;
    SearchOptions s = options.search;
    s.tied = tied;
    s.offload = engine.can_offload();
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.time_budget_s = std::max(0.0, options.search.time_budget_s - spent) / double(placements.size() - p);
    s.max_steps = std::max<int64_t>(1000, options.search.max_steps / int64_t(placements.size()));
    SearchResult r = mcmc_search(graph, candidates, evaluator, {}, s);
    ++out.placements;
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
    const std::string why = can_run(engine, graph, cluster, *out.plan);
    REALIGN_CHECK(why.empty()) << "the engine search proposed a plan " << engine.name()
                               << " cannot run: " << why;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace realign::engines
