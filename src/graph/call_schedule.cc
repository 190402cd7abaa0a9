#include "graph/call_schedule.h"

#include <algorithm>

namespace realign {

bool runs_ahead(const DataflowGraph& graph, int call) {
  const Mfc& m = graph.mfcs.at(size_t(call));
  if (m.kind() == MfcKind::kGenerate) return true;
  if (graph.model(m.model).trained || m.kind() == MfcKind::kTrain) return false;
  const std::vector<int> parents = graph.parents(call);
  if (parents.empty()) return false;  // reads only the dataset: nothing to run ahead of
  return std::all_of(parents.begin(), parents.end(), [&](int p) { return runs_ahead(graph, p); });
}

int64_t scheduled_staleness(const DataflowGraph& graph) {
  return graph.staleness_share < 1 ? graph.staleness - 1 : graph.staleness;
}

std::vector<CallInstance> step_calls(const DataflowGraph& graph, int64_t step, int64_t iterations) {
  const int64_t staleness = scheduled_staleness(graph);
  const int64_t last = std::min(step + staleness, iterations);
  // The iterations whose calls that run ahead belong to this step: step s+N, and in step 1 also 1..N.
  const int64_t first_ahead = step == 1 ? 1 : step + staleness;
  const int n_calls = int(graph.mfcs.size());
  auto generates = [&](int c) { return graph.mfcs[size_t(c)].kind() == MfcKind::kGenerate; };
  std::vector<CallInstance> out;
  // This iteration's own calls that run ahead, where they have not run in an earlier step (N = 0, or step 1).
  if (first_ahead == step)
    for (int c = 0; c < n_calls; ++c)
      if (runs_ahead(graph, c)) out.push_back({c, step});
  // The generations of the later iterations that start here, then this iteration's other calls, then the
  // later iterations' other calls that run ahead: those are needed only in a later step, so on devices they
  // share with this iteration's calls they do not hold its training up.
  const int64_t first_later = std::max(first_ahead, step + 1);
  for (int64_t it = first_later; it <= last; ++it)
    for (int c = 0; c < n_calls; ++c)
      if (generates(c)) out.push_back({c, it});
  for (int c = 0; c < n_calls; ++c)
    if (!runs_ahead(graph, c)) out.push_back({c, step});
  for (int64_t it = first_later; it <= last; ++it)
    for (int c = 0; c < n_calls; ++c)
      if (runs_ahead(graph, c) && !generates(c)) out.push_back({c, it});
  return out;
}

std::vector<IterationEdge> iteration_edges(const DataflowGraph& graph) {
  std::vector<IterationEdge> out;
  for (int c = 0; c < int(graph.mfcs.size()); ++c) {
    const Mfc& m = graph.mfcs[size_t(c)];
    const int train = graph.train_call(m.model);
    if (train < 0) continue;
    out.push_back({train, c, m.kind() == MfcKind::kGenerate ? 1 + scheduled_staleness(graph) : 1});
  }
  return out;
}

}  // namespace realign
