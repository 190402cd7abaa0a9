#include "runtime/call_layouts.h"

#include "core/error.h"

namespace realign::runtime {

CallLayouts call_layouts(const DataflowGraph& graph, const ExecutionPlan& plan) {
  CallLayouts out;
  for (const auto& a : plan.assignments) {
    out.call[a.mfc] = a.layout();
    out.micro_batches[a.mfc] = a.strategy.micro_batches;
  }
  for (const auto& mfc : graph.mfcs)
    if (!out.call.count(mfc.name))
      throw Error("plan.mfcs", "the plan has no assignment for call " + mfc.name);
  for (const auto& role : graph.models) {
    const int home = graph.home_call(role.role);
    if (home >= 0) out.home[role.role] = out.call.at(graph.mfcs[size_t(home)].name);
    const int train = graph.train_call(role.role);
    if (train < 0) continue;
    for (const auto& a : plan.assignments)
      if (a.mfc == graph.mfcs[size_t(train)].name) out.zero1[role.role] = a.strategy.zero1;
  }
  return out;
}

}  // namespace realign::runtime
