#include "search/tied_calls.h"

#include <optional>

#include "core/check.h"

namespace realign {

namespace {

bool same_layout(const Strategy& a, const Strategy& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp;
}

// Call `call`'s best strategy on `mesh` with the layout of `like`, or none.
std::optional<MfcAssignment> best_alike(const DataflowGraph& graph, const Cluster& cluster,
                                        PlanEvaluator& evaluator, const CandidateOptions& options,
                                        size_t call, const DeviceMesh& mesh, const Strategy& like) {
  if (options.mesh_filter && !options.mesh_filter(call, mesh).empty()) return std::nullopt;
  std::optional<MfcAssignment> best;
  PlanScore best_score;
  for (const Strategy& s : call_strategies(graph, cluster, call, mesh.size, options.runtime_limits)) {
    if (!same_layout(s, like)) continue;
    if (options.strategy_filter && !options.strategy_filter(call, mesh.size, s).empty()) continue;
    MfcAssignment a{graph.mfcs[call].name, mesh, s};
    const PlanScore score = evaluator.evaluate_call(int(call), a);
    const bool better = !best || (score.fits() != best_score.fits() ? score.fits()
                                  : score.fits()                    ? score.time_s < best_score.time_s
                                                 : score.overflow_bytes < best_score.overflow_bytes);
    if (better) best = a, best_score = score;
  }
  return best;
}

}  // namespace

void tie_candidates(const DataflowGraph& graph, const Cluster& cluster, PlanEvaluator& evaluator,
                    const std::vector<std::vector<std::string>>& tied, const CandidateOptions& options,
                    std::vector<std::vector<MfcAssignment>>& candidates) {
  REALIGN_CHECK(candidates.size() == graph.mfcs.size());
  for (const auto& group : tied) {
    if (group.size() < 2) continue;
    std::vector<size_t> calls;
    for (const auto& name : group) {
      const int i = graph.mfc_index(name);
      REALIGN_CHECK(i >= 0) << "tied names unknown call " << name;
      calls.push_back(size_t(i));
    }
    std::vector<std::vector<MfcAssignment>> aligned(calls.size());
    for (const MfcAssignment& lead : candidates[calls[0]]) {
      std::vector<MfcAssignment> row{lead};
      for (size_t k = 1; k < calls.size(); ++k) {
        auto a = best_alike(graph, cluster, evaluator, options, calls[k], lead.mesh, lead.strategy);
        if (!a) break;
        row.push_back(*a);
      }
      if (row.size() != calls.size()) continue;
      for (size_t k = 0; k < calls.size(); ++k) aligned[k].push_back(row[k]);
    }
    for (size_t k = 0; k < calls.size(); ++k) candidates[calls[k]] = aligned[k];
  }
}

}  // namespace realign
