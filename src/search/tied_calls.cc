#include "search/tied_calls.h"

#include <optional>

#include "core/check.h"

namespace realign {

namespace {

// One worker holds one layout of the model: its grid and, for a mixture of experts, how the experts spread.
bool same_layout(const Strategy& a, const Strategy& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.ep == b.ep && a.cp == b.cp &&
         a.cp_kind == b.cp_kind;
}

// Call `call`'s strategies on `mesh` with the layout of `like`: the fastest (fitting on its own when any
// does) and the leanest (least memory: more micro-batches, recomputation), the same one when it is both.
std::vector<MfcAssignment> alike(const DataflowGraph& graph, const Cluster& cluster, PlanEvaluator& evaluator,
                                 const CandidateOptions& options, size_t call, const DeviceMesh& mesh,
                                 const Strategy& like) {
  if (options.mesh_filter && !options.mesh_filter(call, mesh).empty()) return {};
  std::optional<MfcAssignment> fast, lean;
  PlanScore fast_score, lean_score;
  for (const Strategy& s : call_strategies(graph, cluster, call, mesh.size, options.runtime_limits, 16,
                                           options.generation_waves)) {
    if (!same_layout(s, like)) continue;
    if (options.strategy_filter && !options.strategy_filter(call, mesh.size, s).empty()) continue;
    MfcAssignment a{graph.mfcs[call].name, mesh, s};
    const PlanScore score = evaluator.evaluate_call(int(call), a);
    const bool faster = !fast || (score.fits() != fast_score.fits() ? score.fits()
                                  : score.fits()                    ? score.time_s < fast_score.time_s
                                                 : score.overflow_bytes < fast_score.overflow_bytes);
    if (faster) fast = a, fast_score = score;
    if (!lean || score.memory_bytes < lean_score.memory_bytes) lean = a, lean_score = score;
  }
  if (!fast) return {};
  if (*fast == *lean) return {*fast};
  return {*fast, *lean};
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
      // Two rows per leader candidate: every follower at its fastest, and every follower at its leanest
      // (the memory other models leave beside it decides which one the whole plan can take).
      std::vector<std::vector<MfcAssignment>> options_of;
      for (size_t k = 1; k < calls.size(); ++k) {
        options_of.push_back(alike(graph, cluster, evaluator, options, calls[k], lead.mesh, lead.strategy));
        if (options_of.back().empty()) break;
      }
      if (options_of.size() != calls.size() - 1 || options_of.back().empty()) continue;
      for (size_t variant = 0; variant < 2; ++variant) {
        bool differs = variant == 0;
        std::vector<MfcAssignment> row{lead};
        for (const auto& o : options_of) {
          row.push_back(o[std::min(variant, o.size() - 1)]);
          differs |= o.size() > 1;
        }
        if (!differs) continue;
        for (size_t k = 0; k < calls.size(); ++k) aligned[k].push_back(row[k]);
      }
    }
    for (size_t k = 0; k < calls.size(); ++k) candidates[calls[k]] = aligned[k];
  }
}

}  // namespace realign
