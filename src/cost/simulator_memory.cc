// What devices hold: each model's home between calls, the copies and batches staleness keeps, and the report
// of a device that runs out of memory.
#include "core/units.h"
#include "cost/detail/simulator_run_state.h"
#include "cost/memory_model.h"

namespace realign {

void Simulator::hold_persistent_state(const ExecutionPlan& plan, RunState& st) {
  const auto& mfcs = graph_.mfcs;
  const int nd = cluster_.n_devices();
  const size_t nm = graph_.models.size();
  const int64_t staleness = graph_.staleness;
  // Persistent state, per device. An offloaded model has none: it lives in host memory between its calls.
  st.offloaded.assign(nm, false);
  for (Role role : plan.offload)
    for (size_t m = 0; m < nm; ++m) st.offloaded[m] = st.offloaded[m] || graph_.models[m].role == role;
  st.home.resize(nm);
  std::vector<double>& persistent = st.persistent;
  persistent.assign(size_t(nd), 0.0);
  for (size_t m = 0; m < nm; ++m) {
    if (home_call_[m] < 0) continue;
    st.home[m] = plan.assignments[size_t(home_call_[m])].layout();
    if (st.offloaded[m]) continue;
    const Layout& l = st.home[m];
    const ShardSizes& sh = shards(int(m), l.tp, l.pp, l.ep);
    const HomeBytesPerParam b =
        home_bytes_per_param(graph_.models[m].trained, plan.assignments[size_t(home_call_[m])].strategy);
    const double per_param = b.dense(), per_expert = b.expert();
    // A device's bytes depend only on its (stage, tp rank): priced once per stage, added to every replica.
    std::vector<double> bytes(size_t(l.tp));
    double* device = persistent.data() + l.first_device;
    for (int stage = 0; stage < l.pp; ++stage) {
      const double experts = double(sh.stage_experts(stage));
      for (int t = 0; t < l.tp; ++t)
        bytes[size_t(t)] = (double(sh.at(stage, t)) - experts) * per_param + experts * per_expert;
      for (int replica = 0; replica < l.dp; ++replica, device += l.tp)
        for (int t = 0; t < l.tp; ++t) device[t] += bytes[size_t(t)];
    }
  }
  if (generation_turns_) st.home_bytes = persistent;

  // Staleness N > 0: while the train calls update the actor's home weights, a generation on other devices
  // runs beside them reading an older version, so its devices keep their copy between calls (one per
  // layout); a generation sharing a device with the home serializes with training there and drops its copy
  // after the call, as synchronously. Generation devices also hold the outputs of the N iterations generated
  // ahead until training takes them.
  st.held.assign(mfcs.size(), false);
  if (staleness > 0)
    for (size_t i = 0; i < mfcs.size(); ++i) {
      if (mfcs[i].kind() != MfcKind::kGenerate) continue;
      const int m = call_model_[i];
      const MfcAssignment& a = plan.assignments[i];
      const Layout dst = a.layout();
      const Layout& home = st.home[size_t(m)];
      bool held = !st.offloaded[size_t(m)] && !a.mesh.overlaps(DeviceMesh{home.first_device, home.size()}) &&
                  realloc(m, home, dst).bytes > 0;
      for (size_t j = 0; j < i && held; ++j)
        held = !(st.held[j] && call_model_[j] == m && plan.assignments[j].layout() == dst);
      st.held[i] = held;
      const CallEstimate& est = call_estimate(int(i), a);
      const double batches = in_flight_bytes(int(i), a);
      const int stage_size = dst.dp * dst.tp;
      for (int stage = 0; stage < dst.pp; ++stage) {
        const double add = batches + (held ? est.stages[size_t(stage)].weights : 0.0);
        double* device = persistent.data() + dst.first_device + stage * stage_size;
        for (int k = 0; k < stage_size; ++k) device[k] += add;
      }
    }
}

double Simulator::in_flight_bytes(int call, const MfcAssignment& a) const {
  const Mfc& m = graph_.mfcs[size_t(call)];
  double per_seq = 0;
  for (const std::string& out : m.outputs) per_seq += graph_.data_spec(out).bytes_per_seq;
  return double(graph_.staleness) * double(seqs_per_dp_rank(m, a.strategy.dp)) * per_seq;
}

std::string Simulator::oom_report(int device, int call, bool in_turn, const ExecutionPlan& plan,
                                  const RunState& st, double peak, double limit) {
  std::string parts;
  auto add = [&](const std::string& what, double bytes) {
    if (bytes > 0) parts += (parts.empty() ? "" : ", ") + what + " " + format_bytes(bytes);
  };
  for (size_t m = 0; m < graph_.models.size() && !in_turn; ++m) {
    if (home_call_[m] < 0 || st.offloaded[m] || !st.home[m].contains(device)) continue;
    const Layout& l = st.home[m];
    const Layout::Coord c = l.coord_of(device);
    const ShardSizes& sh = shards(int(m), l.tp, l.pp, l.ep);
    const double n = double(sh.at(c.pp, c.tp)), experts = double(sh.stage_experts(c.pp));
    const std::string name = to_string(graph_.models[m].role);
    const HomeBytesPerParam b =
        home_bytes_per_param(graph_.models[m].trained, plan.assignments[size_t(home_call_[m])].strategy);
    add(name + " weights", n * b.weights);
    add(name + " gradients", n * b.gradients);
    add(name + " optimizer state", (n - experts) * b.optimizer + experts * b.expert_optimizer);
  }
  if (graph_.staleness > 0)
    for (size_t i = 0; i < graph_.mfcs.size(); ++i) {
      const MfcAssignment& a = plan.assignments[i];
      const Layout l = a.layout();
      if (graph_.mfcs[i].kind() != MfcKind::kGenerate || !l.contains(device)) continue;
      const std::string& name = graph_.mfcs[i].name;
      if (st.held[i])
        add(name + " weight version kept for staleness " + std::to_string(graph_.staleness),
            call_estimate(int(i), a).stages[size_t((device - l.first_device) / (l.dp * l.tp))].weights);
      add(name + " batches in flight", in_flight_bytes(int(i), a));
    }
  std::string during = "its persistent state";
  if (call >= 0) {
    const MfcAssignment& a = plan.assignments[size_t(call)];
    const Layout l = a.layout();
    const MemoryBreakdown& mem =
        call_estimate(call, a).stages[size_t((device - l.first_device) / (l.dp * l.tp))];
    const std::string& name = graph_.mfcs[size_t(call)].name;
    during = name + (in_turn ? " (its turn: the models' homes in host memory)" : "");
    if (st.copy[size_t(call)] && !st.held[size_t(call)])
      add(name + " reallocated or loaded weights", mem.weights);
    add(name + " activations", mem.activations);
    add(name + " KV cache", mem.kv_cache);
    add(name + " logits", mem.logits);
  }
  return "device " + std::to_string(device) + " needs " + format_bytes(peak) + " during " + during +
         " (limit " + format_bytes(limit) + "): " + parts;
}

}  // namespace realign
