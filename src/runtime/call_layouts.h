// Where every call of a plan runs and where every model's parameters live between calls: a trained model
// lives in its train call's layout (with its optimizer state); a model that is never trained lives in the
// layout of its first call. Any other call on the model gets a reallocated copy for its own layout.
#pragma once

#include <map>
#include <string>

#include "graph/dataflow_graph.h"
#include "plan/execution_plan.h"

namespace realign::runtime {

struct CallLayouts {
  std::map<std::string, Layout> call;            // call name -> the layout it runs with
  std::map<Role, Layout> home;                   // model role -> where its parameters live between calls
  std::map<std::string, int64_t> micro_batches;  // call name -> the forward passes its batch is cut into
  std::map<Role, bool> zero1;  // trained model role -> its train call shards Adam state over dp
};

// `plan` must be valid for `graph` (validate_plan). Throws Error naming the call when the plan misses one.
CallLayouts call_layouts(const DataflowGraph& graph, const ExecutionPlan& plan);

}  // namespace realign::runtime
