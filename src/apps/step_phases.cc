#include "apps/step_phases.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/units.h"

namespace realign::apps {

namespace {

// The devices' idle share of [begin, end) (relative to the last step's start): device-seconds outside the
// timeline's events over all device-seconds.
double idle_share(const SimulationResult& r, double begin, double end) {
  const int devices = r.timeline.n_devices;
  if (!(end > begin) || devices <= 0 || r.timeline.events.empty()) return 0;
  std::vector<std::vector<std::pair<double, double>>> busy(static_cast<size_t>(devices));
  for (const TimelineEvent& e : r.timeline.events) {
    const double from = std::max(e.start_s - r.steady_start_s, begin), to = std::min(e.end_s - r.steady_start_s, end);
    if (to <= from) continue;
    for (int d = e.first_device; d < e.first_device + e.n_devices && d < devices; ++d)
      busy[size_t(d)].push_back({from, to});
  }
  double busy_s = 0;
  for (auto& spans : busy) {  // the union of each device's spans (a call and its moves may overlap)
    std::sort(spans.begin(), spans.end());
    double reach = begin;
    for (const auto& [from, to] : spans) {
      busy_s += std::max(0.0, to - std::max(from, reach));
      reach = std::max(reach, to);
    }
  }
  return std::max(0.0, 1.0 - busy_s / (double(devices) * (end - begin)));
}

}  // namespace

StepPhases step_phases(Simulator& simulator, const ExecutionPlan& plan, const SimulationResult& result) {
  StepPhases p;
  p.iteration_s = result.iteration_time_s;
  const DataflowGraph& g = simulator.graph();
  // A phase's time is its wall-clock span, from its first call's start to its last call's end (calls of a
  // phase on disjoint devices run at once).
  double gen_begin = 1e300, gen_end = -1e300, train_begin = 1e300, train_end = -1e300, tail_share = 0;
  for (size_t i = 0; i < g.mfcs.size() && i < result.calls.size(); ++i) {
    const CallResult& c = result.calls[i];
    if (g.mfcs[i].kind() == MfcKind::kGenerate) {
      gen_begin = std::min(gen_begin, c.start_s);
      gen_end = std::max(gen_end, c.end_s);
      // The simulated span carries the node's load; the tail keeps its share of the call's own estimate.
      const CallEstimate& e = simulator.call_estimate(int(i), plan.assignments[i]);
      if (e.time_s > 0) tail_share = std::max(tail_share, e.tail_s / e.time_s);
    } else if (g.mfcs[i].kind() == MfcKind::kTrain) {
      train_begin = std::min(train_begin, c.start_s);
      train_end = std::max(train_end, c.end_s);
    }
  }
  p.generation_s = std::max(0.0, gen_end - gen_begin);
  p.generation_tail_s = p.generation_s * tail_share;
  p.train_s = std::max(0.0, train_end - train_begin);
  p.generation_idle_share = idle_share(result, gen_begin, gen_end);
  p.train_idle_share = idle_share(result, train_begin, train_end);
  return p;
}

std::string describe_generation(const StepPhases& p) {
  char text[160];
  std::string out = "generation " + format_seconds(p.generation_s);
  if (p.generation_s > 0 && p.generation_tail_s > 0) {
    std::snprintf(text, sizeof text, ", of which the tail (the last 10%% of samples) %.0f%%",
                  100.0 * p.generation_tail_s / p.generation_s);
    out += text;
  }
  std::snprintf(text, sizeof text, " (devices idle %.0f%%); updates ", 100.0 * p.generation_idle_share);
  out += text + format_seconds(p.train_s);
  std::snprintf(text, sizeof text, " (devices idle %.0f%%)", 100.0 * p.train_idle_share);
  return out + text;
}

std::string staleness_reason(int64_t n, const StepPhases& p, const StepPhases& sync, bool partial_rollout) {
  if (n == 0 || sync.iteration_s <= 0 || p.iteration_s <= 0) return "";
  const double gain = sync.iteration_s / p.iteration_s;
  std::string why;
  if (gain > 1.02) {
    why = "generation (" + format_seconds(p.generation_s) + ") runs beside the updates (" +
          format_seconds(p.train_s) + ")";
    if (partial_rollout) why += ", its tail interrupted, not waited for";
    return why;
  }
  // No gain: whichever phase alone takes the step.
  if (p.train_s >= p.generation_s)
    return "training bounds the step: the updates take " + format_seconds(p.train_s) + " of its " +
           format_seconds(p.iteration_s) + ", generation " + format_seconds(p.generation_s);
  return "generation bounds the step: " + format_seconds(p.generation_s) + " of its " +
         format_seconds(p.iteration_s) + " (the updates " + format_seconds(p.train_s) + ")";
}

}  // namespace realign::apps
