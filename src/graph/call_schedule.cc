#include "graph/call_schedule.h"

#include <algorithm>

namespace realign {

bool runs_ahead(const DataflowGraph& graph, int call) {
  const Mfc& m = graph.mfcs.at(size_t(call));
  if (m.kind == MfcKind::kGenerate) return true;
  if (graph.model(m.model).trained || m.kind == MfcKind::kTrain) return false;
  const std::vector<int> parents = graph.parents(call);
  if (parents.empty()) return false;  // reads only the dataset: nothing to run ahead of
  return std::all_of(parents.begin(), parents.end(), [&](int p) { return runs_ahead(graph, p); });
}

std::vector<CallInstance> step_calls(const DataflowGraph& graph, int64_t step, int64_t iterations) {
  const int64_t n = graph.staleness;
  std::vector<CallInstance> out;
  const int64_t first_ahead = step == 1 ? 1 : step + n;
  for (int64_t it = first_ahead; it <= std::min(step + n, iterations); ++it)
    for (int c = 0; c < int(graph.mfcs.size()); ++c)
      if (runs_ahead(graph, c)) out.push_back({c, it});
  for (int c = 0; c < int(graph.mfcs.size()); ++c)
    if (!runs_ahead(graph, c)) out.push_back({c, step});
  return out;
}

std::vector<IterationEdge> iteration_edges(const DataflowGraph& graph) {
  std::vector<IterationEdge> out;
  for (int c = 0; c < int(graph.mfcs.size()); ++c) {
    const Mfc& m = graph.mfcs[size_t(c)];
    const int train = graph.train_call(m.model);
    if (train < 0) continue;
    out.push_back({train, c, m.kind == MfcKind::kGenerate ? 1 + graph.staleness : 1});
  }
  return out;
}

}  // namespace realign
