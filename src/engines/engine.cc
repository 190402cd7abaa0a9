#include "engines/engine.h"

#include <algorithm>

#include "core/error.h"
#include "engines/adapters.h"

namespace realign::engines {

std::vector<std::string> engine_names() { return {"verl", "openrlhf", "areal", "nemo-rl"}; }

std::unique_ptr<Engine> make_engine(const std::string& name, const std::string& path) {
  const EngineName n = parse_engine_name(name, path);
  if (n.engine == "verl") return make_verl(*n.release);
  if (n.engine == "openrlhf") return make_openrlhf(*n.release);
  if (n.engine == "areal") return make_areal(*n.release);
  return make_nemo_rl(*n.release);
}

namespace {

std::string strategies_problem(const Engine& engine, const DataflowGraph& graph, const Placement& placement,
                               const ExecutionPlan& plan) {
  for (size_t i = 0; i < graph.mfcs.size(); ++i) {
    const MfcAssignment& a = plan.assignments[i];
    if (std::string why = engine.strategy_problem(graph, placement, i, a.mesh.size, a.strategy); !why.empty())
      return a.mfc + ": " + why;
  }
  return "";
}

// Whether every call of `plan` is on the placement's mesh for it.
bool on_meshes(const DataflowGraph& graph, const ExecutionPlan& plan, const Placement& p) {
  for (size_t i = 0; i < graph.mfcs.size(); ++i)
    if (plan.assignments[i].mesh != p.meshes[i]) return false;
  return true;
}

}  // namespace

std::string can_run(const Engine& engine, const DataflowGraph& graph, const Cluster& cluster,
                    const ExecutionPlan& plan, Placement* matched, const Json& script_options) {
  if (plan.assignments.size() != graph.mfcs.size()) return "the plan does not assign every call";
  for (size_t i = 0; i < graph.mfcs.size(); ++i)
    if (plan.assignments[i].mfc != graph.mfcs[i].name) return "the plan's calls are not in the graph's order";
  if (!plan.offload.empty() && !engine.can_offload())
    return engine.display_name() + " has no setting that keeps " + to_string(plan.offload[0]) +
           " in host memory between its calls";
  for (const auto& group : engine.tied(graph)) {
    const MfcAssignment& lead = plan.assignments[size_t(graph.mfc_index(group[0]))];
    for (size_t k = 1; k < group.size(); ++k) {
      const MfcAssignment& a = plan.assignments[size_t(graph.mfc_index(group[k]))];
      if (a.mesh != lead.mesh || a.strategy.dp != lead.strategy.dp || a.strategy.tp != lead.strategy.tp ||
          a.strategy.pp != lead.strategy.pp || a.strategy.ep != lead.strategy.ep ||
          a.strategy.cp != lead.strategy.cp || a.strategy.cp_kind != lead.strategy.cp_kind)
        return a.mfc + " must run in " + lead.mfc + "'s layout (" + engine.display_name() +
               " runs them in one worker)";
    }
  }
  std::string first_problem = "its meshes are none of " + engine.display_name() + "'s placements";
  for (Placement p : engine.placements(graph, cluster)) {
    if (!on_meshes(graph, plan, p)) continue;
    p.options.update(script_options);
    const std::string why = strategies_problem(engine, graph, p, plan);
    if (why.empty()) {
      if (matched) *matched = p;
      return "";
    }
    first_problem = why;
  }
  return first_problem;
}

std::vector<Placement> placements_running(const Engine& engine, const DataflowGraph& graph,
                                          const Cluster& cluster, const ExecutionPlan& plan,
                                          const Json& script_options) {
  std::vector<Placement> out;
  if (!can_run(engine, graph, cluster, plan, nullptr, script_options).empty()) return out;
  for (Placement p : engine.placements(graph, cluster)) {
    if (!on_meshes(graph, plan, p)) continue;
    p.options.update(script_options);
    if (strategies_problem(engine, graph, p, plan).empty()) out.push_back(p);
  }
  return out;
}

}  // namespace realign::engines
