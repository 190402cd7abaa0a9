#include "cost/simulator.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "cost/detail/simulator_run_state.h"

namespace realign {

Simulator::Simulator(DataflowGraph graph, Cluster cluster, HardwareProfile profile)
    : graph_(std::move(graph)), cluster_(std::move(cluster)), profile_(std::move(profile)) {
  const size_t nm = graph_.models.size();
  home_call_.assign(nm, -1);
  for (const auto& m : graph_.models) params_.push_back(model_params(m.spec, m.head));
  auto model_index = [&](Role role) {
    for (size_t m = 0; m < nm; ++m)
      if (graph_.models[m].role == role) return int(m);
    REALIGN_CHECK(false) << "no model " << role;
    return -1;
  };
  auto data_index = [&](const std::string& name) {
    for (size_t d = 0; d < graph_.data.size(); ++d)
      if (graph_.data[d].name == name) return int(d);
    REALIGN_CHECK(false) << "no data " << name;
    return -1;
  };
  for (size_t i = 0; i < graph_.mfcs.size(); ++i) {
    const Mfc& mfc = graph_.mfcs[i];
    const int m = model_index(mfc.model);
    call_model_.push_back(m);
    std::vector<std::pair<int, int>> ins;
    for (const auto& in : mfc.inputs) {
      int producer = -1;
      for (size_t j = 0; j < i; ++j) {
        const auto& outs = graph_.mfcs[j].outputs;
        if (std::find(outs.begin(), outs.end(), in) != outs.end()) producer = int(j);
      }
      ins.emplace_back(data_index(in), producer);
    }
    inputs_.push_back(std::move(ins));
  }
  for (size_t m = 0; m < nm; ++m) home_call_[m] = graph_.home_call(graph_.models[m].role);
  weight_edges_.resize(graph_.mfcs.size());
  for (const IterationEdge& e : iteration_edges(graph_))
    weight_edges_[size_t(e.to)].emplace_back(e.from, e.lag);
  fixed_time_.assign(graph_.mfcs.size(), -1.0);
  // The steps of a long run, computed once (the search simulates a plan many times): from step 2 on, a step
  // is the previous one an iteration later, which the check below confirms on step 3.
  const int64_t long_run = int64_t(1) << 40;
  first_step_ = step_calls(graph_, 1, long_run);
  second_step_ = step_calls(graph_, 2, long_run);
  std::vector<CallInstance> third = second_step_;
  for (CallInstance& c : third) ++c.iteration;
  REALIGN_CHECK(third == step_calls(graph_, 3, long_run)) << "steps after the first do not repeat";
}

void Simulator::set_call_time(int mfc, double time_s) {
  REALIGN_CHECK(mfc >= 0 && size_t(mfc) < fixed_time_.size() && time_s >= 0) << mfc << " " << time_s;
  fixed_time_[size_t(mfc)] = time_s;
  calls_.clear();
}

void Simulator::set_generation_profile(HardwareProfile profile) {
  generation_profile_ = std::move(profile);
  calls_.clear();
}

void Simulator::set_pass_profile(HardwareProfile profile) {
  pass_profile_ = std::move(profile);
  calls_.clear();
}

namespace {

// The segments a call's rows arrive in: an RL train call takes each mini-batch as a segment of the whole
// batch, each dp rank its share of every segment (train/train_calls.h); other calls one.
int64_t consumer_segments(const Mfc& mfc) {
  if (mfc.kind() != MfcKind::kTrain || mfc.pair_loss()) return 1;
  return std::max<int64_t>(1, std::min(mfc.mini_batches, mfc.n_seqs));
}

}  // namespace

SimulationResult Simulator::run(const ExecutionPlan& plan) { return run(plan, true); }

SimulationResult Simulator::score(const ExecutionPlan& plan) { return run(plan, false); }

SimulationResult Simulator::run(const ExecutionPlan& plan, bool detailed) {
  const bool contended = profile_.compute_slots_per_node.value < double(cluster_.devices_per_node);
  SimulationResult r = simulate(plan, {}, detailed || contended);
  if (!contended) return r;
  // Workers share the node's compute slots: a call's collectives slow down with the ranks busy beside it,
  // which the first pass's timeline tells (a second pass on that; calls do not move much between them).
  return simulate(plan, busy_ranks(r), detailed);
}

std::vector<double> Simulator::busy_ranks(const SimulationResult& r) const {
  const int per_node = cluster_.devices_per_node;
  std::vector<TimelineEvent> calls;
  for (const TimelineEvent& e : r.timeline.events)
    if (e.kind == "call") calls.push_back(e);
  auto ranks_on = [&](const TimelineEvent& e, int node) {
    const int lo = std::max(e.first_device, node * per_node);
    const int hi = std::min(e.first_device + e.n_devices, (node + 1) * per_node);
    return double(std::max(0, hi - lo));
  };
  std::vector<double> busy(r.calls.size(), 0.0);
  for (size_t i = 0; i < r.calls.size(); ++i) {
    // The call's last instance (staleness > 0: of the last step, the one r.calls describes).
    const TimelineEvent* me = nullptr;
    for (const TimelineEvent& e : calls)
      if (e.name == r.calls[i].name) me = &e;
    if (me == nullptr) continue;
    const double span = me->end_s - me->start_s;
    if (span <= 0) continue;
    // On each node the call spans: its ranks there, plus every other call's ranks there weighted by the
    // share of this call's time they overlap it; the busiest node paces the call.
    for (int node = me->first_device / per_node; node * per_node < me->first_device + me->n_devices; ++node) {
      double b = ranks_on(*me, node);
      for (const TimelineEvent& e : calls) {
        if (&e == me) continue;
        const double overlap = std::min(e.end_s, me->end_s) - std::max(e.start_s, me->start_s);
        if (overlap > 0) b += ranks_on(e, node) * overlap / span;
      }
      busy[i] = std::max(busy[i], b);
    }
  }
  return busy;
}

SimulationResult Simulator::simulate(const ExecutionPlan& plan, const std::vector<double>& busy,
                                     bool detailed) {
  const auto& mfcs = graph_.mfcs;
  REALIGN_CHECK(plan.assignments.size() == mfcs.size()) << plan.assignments.size() << " assignments";
  const int nd = cluster_.n_devices();
  const int64_t staleness = graph_.staleness;
  SimulationResult r;
  r.staleness = staleness;
  r.timeline.n_devices = nd;
  if (detailed) r.timeline.events.reserve(mfcs.size() * 3 * (staleness > 0 ? 4 : 1));
  r.calls.resize(mfcs.size());
  RunState st(DeviceTimelines(plan, nd, detailed ? &r.timeline.events : nullptr));

  hold_persistent_state(plan, st);

  st.transient.assign(size_t(nd), 0.0);
  st.transient_call.assign(size_t(nd), -1);
  if (generation_turns_) {  // the search's simulations without turns allocate none of it
    st.turn.assign(size_t(nd), 0.0);
    st.turn_call.assign(size_t(nd), -1);
  }
  if (graph_.staleness_share < 1) st.tl.work_free.assign(st.tl.free.size(), 0.0);
  st.copy.assign(mfcs.size(), false);
  st.call_peak.assign(mfcs.size(), -1.0);
  st.calls = mfcs.size();
  st.end.assign(size_t(Simulator::kMaxSteps + staleness + 1) * st.calls, -1.0);
  std::vector<double> busy_before(st.tl.busy.size(), 0.0);  // per segment, at the last step's start
  double first_end = 0, previous_len = -1;
  for (int64_t step = 1;; ++step) {
    if (step > 1) busy_before = st.tl.busy;
    r.realloc_bytes = r.offload_bytes = 0;
    // Every step generates ahead (the window is the middle of a long run).
    for (const CallInstance& c : step == 1 ? first_step_ : second_step_)
      place(c.call, c.iteration + (step == 1 ? 0 : step - 2), plan, busy, st, r);
    double calls_end = 0;
    for (double f : st.tl.free) calls_end = std::max(calls_end, f);
    // The step's own work outside the calls (rewards, advantages) holds every device: the next step's
    // calls wait for it.
    st.tl.iteration = step;
    st.tl.occupy("iteration", "host", 0, nd, calls_end, calls_end + profile_.iteration_overhead_s.value, 0.0);
    const double step_end = calls_end + profile_.iteration_overhead_s.value;
    const double len = step_end - r.steady_start_s;
    r.steps = step;
    r.iteration_time_s = len;
    if (staleness == 0) break;  // one step is the iteration
    if (step == 1) first_end = step_end;
    // Settled: two consecutive steps after the first (which also generates ahead) take the same time.
    if (step >= 3 && std::abs(len - previous_len) <= 1e-9 * len) break;
    if (step == kMaxSteps) {
      // Not settled (no rule today leads here): the mean time of the steps after the first.
      r.iteration_time_s = (step_end - first_end) / double(step - 1);
      break;
    }
    previous_len = len;
    r.steady_start_s = step_end;
  }

  // `calls` hold the last step's instances (the only ones with staleness 0), relative to its start.
  if (staleness > 0)
    for (CallResult& c : r.calls) {
      c.start_s -= r.steady_start_s;
      c.end_s -= r.steady_start_s;
    }
  const double limit = profile_.memory_bytes.value * profile_.usable_memory_fraction.value;
  r.device_peak_mem_bytes.assign(size_t(nd), 0.0);
  if (generation_turns_) {
    r.device_home_bytes.assign(size_t(nd), 0.0);
    r.device_turn_peak_mem_bytes.assign(size_t(nd), 0.0);
  }
  r.device_idle_fraction.assign(size_t(nd), 1.0);
  if (r.iteration_time_s > 0)
    for (size_t k = 0; k + 1 < st.tl.bounds.size(); ++k) {
      const double idle = 1.0 - (st.tl.busy[k] - busy_before[k]) / r.iteration_time_s;
      std::fill(r.device_idle_fraction.begin() + st.tl.bounds[k],
                r.device_idle_fraction.begin() + st.tl.bounds[k + 1], idle);
    }
  int worst = -1;
  for (int d = 0; d < nd; ++d) {
    const double in_turn = generation_turns_ ? st.turn[size_t(d)] : 0.0;
    const double peak = std::max(st.persistent[size_t(d)] + st.transient[size_t(d)], in_turn);
    r.device_peak_mem_bytes[size_t(d)] = peak;
    if (generation_turns_) {
      r.device_home_bytes[size_t(d)] = st.home_bytes[size_t(d)];
      r.device_turn_peak_mem_bytes[size_t(d)] = st.turn[size_t(d)];
    }
    if (peak > limit && (worst < 0 || peak > r.device_peak_mem_bytes[size_t(worst)])) worst = d;
  }
  if (worst >= 0) {
    r.fits = false;
    const size_t w = size_t(worst);
    const bool in_turn = generation_turns_ && st.turn[w] > st.persistent[w] + st.transient[w];
    if (detailed)
      r.oom_report = oom_report(worst, in_turn ? st.turn_call[w] : st.transient_call[w], in_turn, plan, st,
                                r.device_peak_mem_bytes[w], limit);
  }
  return r;
}

void Simulator::place(int i, int64_t iteration, const ExecutionPlan& plan, const std::vector<double>& busy,
                      RunState& st, SimulationResult& r) {
  const auto& mfcs = graph_.mfcs;
  const MfcAssignment& a = plan.assignments[size_t(i)];
  REALIGN_CHECK(a.mfc == mfcs[size_t(i)].name)
      << "assignment " << i << " is " << a.mfc << ", expected " << mfcs[size_t(i)].name;
  DeviceTimelines& tl = st.tl;
  tl.iteration = iteration;
  const int m = call_model_[size_t(i)];
  const Layout dst = a.layout();
  CallEstimate contended;
  if (!busy.empty()) contended = estimate(i, a, busy[size_t(i)]);
  const CallEstimate& est = busy.empty() ? call_estimate(i, a) : contended;
  CallResult& cr = r.calls[size_t(i)];
  cr = CallResult{};
  cr.name = mfcs[size_t(i)].name;
  if (!busy.empty()) cr.busy_ranks = busy[size_t(i)];
  // The weights it reads exist once the train calls of earlier iterations that leave them are done.
  double weights_ready = 0;
  for (const auto& [train, lag] : weight_edges_[size_t(i)])
    weights_ready = std::max(weights_ready, st.end_of(train, iteration - lag));
  const double devices_free = tl.start_on(dst.first_device, dst.size());
  double t = std::max(devices_free, weights_ready);
  // A share of the batch below 1 (fractional staleness, with partial rollouts): the generation is placed
  // against the newer weights, but while its devices wait for them it may already generate up to its share
  // with the weights one update older; after the weight sync it generates the rest.
  double ahead_s = 0;
  if (graph_.staleness_share < 1 && mfcs[size_t(i)].kind() == MfcKind::kGenerate) {
    double older_ready = 0;
    for (const auto& [train, lag] : weight_edges_[size_t(i)])
      older_ready = std::max(older_ready, st.end_of(train, iteration - lag - 1));
    const double early = std::max(tl.work_start_on(dst.first_device, dst.size()), older_ready);
    ahead_s = std::clamp(t - early, 0.0, graph_.staleness_share * est.time_s);
    if (ahead_s > 0) tl.occupy(cr.name, "call", dst.first_device, dst.size(), early, early + ahead_s, 0.0);
  }

  if (st.offloaded[size_t(m)]) {
    // Loaded from host memory before the call: every device reads its shard over its own host link.
    const ShardSizes& sh = shards(m, dst.tp, dst.pp, dst.ep);
    double bytes = 0, slowest = 0;
    for (int rank = 0; rank < dst.size(); ++rank) {
      const double b = double(sh.at(rank / (dst.dp * dst.tp), rank % dst.tp)) * kWeightBytesPerParam;
      bytes += b;
      slowest = std::max(slowest, b);
    }
    const double load_s = slowest / profile_.host_device_bandwidth.value;
    st.copy[size_t(i)] = true;
    tl.occupy(cr.name, "load", dst.first_device, dst.size(), t, t + load_s, bytes);
    r.offload_bytes += bytes;
    cr.realloc_s = load_s;
    t += load_s;
  } else if (dst != st.home[size_t(m)]) {
    // When every destination device already holds what it needs (e.g. fewer dp replicas on the same
    // devices) the call uses the resident weights in place: no transfer, no copy.
    const Layout& src = st.home[size_t(m)];
    const TransferCost& rc = realloc(m, src, dst);
    st.copy[size_t(i)] = rc.bytes > 0;
    if (st.copy[size_t(i)]) {
      // Senders take part too: the event covers the destination block and the source devices outside it.
      const double start = std::max(t, tl.start_on(src.first_device, src.size()));
      const double end = start + rc.time_s;
      tl.occupy(cr.name, "realloc", dst.first_device, dst.size(), start, end, rc.bytes);
      const int s0 = src.first_device, s1 = src.first_device + src.size();
      const int d0 = dst.first_device, d1 = dst.first_device + dst.size();
      if (s0 < d0) tl.occupy(cr.name, "realloc", s0, std::min(s1, d0) - s0, start, end, 0.0);
      if (s1 > d1) tl.occupy(cr.name, "realloc", std::max(s0, d1), s1 - std::max(s0, d1), start, end, 0.0);
      r.realloc_bytes += rc.bytes;
      cr.realloc_s = rc.time_s;
      t = end;
    }
  }

  const bool turn = generation_turns_ && mfcs[size_t(i)].kind() == MfcKind::kGenerate;

  // A call's inputs move in one exchange from all their producers (the runtime's move_rows): each input's
  // bytes at its link's bandwidth, one latency for the exchange.
  double ready = 0, data_s = 0, data_bytes = 0, latency_s = 0;
  for (const auto& [data, producer] : inputs_[size_t(i)]) {
    if (producer < 0) continue;  // read from the dataset by the call itself
    ready = std::max(ready, st.end_of(producer, iteration));
    const TransferCost& dc =
        data_move(data, mfcs[size_t(i)].n_seqs, plan.assignments[size_t(producer)].layout(), dst,
                  consumer_segments(mfcs[size_t(i)]));
    data_s += dc.time_s - dc.latency_s;
    latency_s = std::max(latency_s, dc.latency_s);
    data_bytes += dc.bytes;
  }
  data_s += latency_s;
  t = std::max(t, ready);
  if (data_s > 0) {
    tl.occupy(cr.name, "data", dst.first_device, dst.size(), t, t + data_s, data_bytes);
    t += data_s;
  }
  cr.data_s = data_s;

  cr.start_s = t;
  cr.end_s = t + est.time_s - ahead_s;
  tl.occupy(cr.name, "call", dst.first_device, dst.size(), cr.start_s, cr.end_s, 0.0);
  st.end_at(i, iteration) = cr.end_s;

  // Per device: its stage's activations, KV cache and logits, plus its weight copy when reallocated (a held
  // copy is persistent already). Every instance of a call needs the same on the same devices, so with
  // staleness the later ones repeat the first one's peak and change nothing. The first walks stage by stage,
  // so the need is computed once per stage and the inner loops run over plain arrays.
  cr.peak_mem_bytes = st.call_peak[size_t(i)];
  if (cr.peak_mem_bytes >= 0) return;
  double peak = 0;
  const int stage_size = dst.dp * dst.tp;
  const bool transient_copy = st.copy[size_t(i)] && !st.held[size_t(i)];
  for (int stage = 0; stage < dst.pp; ++stage) {
    const MemoryBreakdown& sm = est.stages[size_t(stage)];
    const double trans = sm.transient() + (transient_copy ? sm.weights : 0.0);
    const size_t d0 = size_t(dst.first_device + stage * stage_size);
    if (turn) {
      // The homes are in host memory for the turn: what persists beside them (held copies, batches in
      // flight) and the call's own need.
      for (size_t d = d0; d < d0 + size_t(stage_size); ++d) {
        const double need = st.persistent[d] - st.home_bytes[d] + trans;
        peak = std::max(peak, need);
        if (need > st.turn[d]) {
          st.turn[d] = need;
          st.turn_call[d] = i;
        }
      }
      continue;
    }
    peak = std::max(peak, max_of(st.persistent.data() + d0, size_t(stage_size), trans));
    for (size_t d = d0; d < d0 + size_t(stage_size); ++d)
      if (trans > st.transient[d]) {
        st.transient[d] = trans;
        st.transient_call[d] = i;
      }
  }
  cr.peak_mem_bytes = st.call_peak[size_t(i)] = peak;
}

}  // namespace realign
