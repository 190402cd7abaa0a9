#include "engines/pricing.h"

#include <algorithm>

#include "cost/call_cost.h"

namespace realign::engines {

double broadcast_sync_s(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& profile,
                        const std::string& model, const DeviceMesh& from, const DeviceMesh& to) {
  const ModelRole& role = graph.model(model);
  const std::vector<ParamInfo> params = model_params(role.spec, role.head);
  double bytes = 0;
  for (const ParamInfo& p : params) bytes += double(p.numel()) * 2.0;  // bf16
  // The broadcast spans nodes when any device of either mesh is on another node than the source's.
  const int node = cluster.node_of(from.first);
  const bool across = cluster.node_of(from.end() - 1) != node || cluster.node_of(to.first) != node ||
                      cluster.node_of(to.end() - 1) != node;
  const double bandwidth = across ? profile.inter_node_bandwidth.value : profile.intra_node_bandwidth.value;
  const double latency = across ? profile.inter_node_latency_s.value : profile.intra_node_latency_s.value;
  return bytes / bandwidth + double(params.size()) * (latency + profile.collective_overhead_s.value);
}

HardwareProfile generation_profile(const HardwareProfile& profile, const Pricing& pricing) {
  HardwareProfile p = profile;
  if (pricing.cuda_graph_decoding) {
    p.layer_launch_overhead_s.value = 0;
    p.layer_launch_overhead_s.source = "engine: decoding replays a captured CUDA graph (" +
                                       pricing.cuda_graph_source + "): no per-layer launches";
  }
  return p;
}

EngineEvaluator::EngineEvaluator(Simulator& simulator, Pricing pricing, bool engine_sync)
    : sim_(simulator),
      pricing_(std::move(pricing)),
      engine_sync_(engine_sync),
      gen_profile_(generation_profile(simulator.profile(), pricing_)),
      limit_(simulator.profile().memory_bytes.value * simulator.profile().usable_memory_fraction.value) {}

EngineEstimate EngineEvaluator::estimate(const ExecutionPlan& plan) {
  EngineEstimate e;
  e.simulation = sim_.run(plan);
  const DataflowGraph& g = sim_.graph();
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    if (g.mfcs[i].kind != MfcKind::kGenerate) continue;
    const MfcAssignment& a = plan.assignments[i];
    // Both estimates without contention: on accelerators each device computes on its own.
    e.generation_delta_s += estimate_call(g, sim_.cluster(), gen_profile_, int(i), a).time_s -
                            estimate_call(g, sim_.cluster(), sim_.profile(), int(i), a).time_s;
    const int train = g.train_call(g.mfcs[i].model);
    // On the training devices themselves the engine reshards in place: realign's reallocation prices that.
    if (engine_sync_ && pricing_.broadcast_weight_sync && train >= 0 &&
        !a.mesh.overlaps(plan.assignments[size_t(train)].mesh)) {
      const double sync = broadcast_sync_s(g, sim_.cluster(), sim_.profile(), g.mfcs[i].model,
                                           plan.assignments[size_t(train)].mesh, a.mesh);
      e.sync_s += sync;
      e.sync_delta_s += sync - e.simulation.calls[i].realloc_s;
    }
  }
  e.iteration_time_s = e.simulation.iteration_time_s + e.generation_delta_s + e.sync_delta_s;
  return e;
}

PlanScore EngineEvaluator::evaluate(const ExecutionPlan& plan) {
  const EngineEstimate e = estimate(plan);
  PlanScore score;
  score.time_s = e.iteration_time_s;
  for (double peak : e.simulation.device_peak_mem_bytes)
    score.memory_bytes = std::max(score.memory_bytes, peak);
  score.overflow_bytes = std::max(0.0, score.memory_bytes - limit_);
  return score;
}

PlanScore EngineEvaluator::evaluate_call(int mfc, const MfcAssignment& assignment) {
  const CallEstimate& base = sim_.call_estimate(mfc, assignment);
  double time = base.time_s;
  if (sim_.graph().mfcs[size_t(mfc)].kind == MfcKind::kGenerate)
    time = estimate_call(sim_.graph(), sim_.cluster(), gen_profile_, mfc, assignment).time_s;
  return PlanScore{time, std::max(0.0, base.memory.total() - limit_), base.memory.total()};
}

}  // namespace realign::engines
