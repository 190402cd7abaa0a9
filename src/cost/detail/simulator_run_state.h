// One simulation's state, shared by the simulator's files (simulator.cc places calls on the timelines,
// simulator_memory.cc prices what devices hold): per-device timelines, memory and the call instances' ends.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/check.h"
#include "cost/simulator.h"

namespace realign {

// The largest of p[k] + add over k < n (n > 0). The maximum of a set does not depend on the order it is
// taken in, so four running maxima give exactly the one a single loop gives, without its chain of dependent
// comparisons: the simulator takes such maxima over every device of a call, 1,024 of them at cluster scale.
inline double max_of(const double* p, size_t n, double add) {
  double m[4] = {p[0] + add, p[0] + add, p[0] + add, p[0] + add};
  size_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (size_t j = 0; j < 4; ++j) m[j] = std::max(m[j], p[k + j] + add);
  for (; k < n; ++k) m[0] = std::max(m[0], p[k] + add);
  return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}

// Per-device timelines of one run. Every event covers whole layouts of the plan (a call's, a model's home, or
// the part of a home outside a call's layout), so the devices between two consecutive layout boundaries are
// always busy alike: they are kept as one segment, which gives each device exactly the times it would have
// on its own and makes an event cost a few segments instead of up to a thousand devices.
struct DeviceTimelines {
  std::vector<int> bounds;         // segment k is devices [bounds[k], bounds[k + 1]); 0 first, n_devices last
  std::vector<double> free, busy;  // per segment
  std::vector<TimelineEvent>* events;  // null: times only
  int64_t iteration = 1;               // of the events being placed

  // Segments cut at the first and end device of every assignment's layout.
  DeviceTimelines(const ExecutionPlan& plan, int n_devices, std::vector<TimelineEvent>* events_out)
      : events(events_out) {
    bounds = {0, n_devices};
    for (const MfcAssignment& a : plan.assignments) {
      const Layout l = a.layout();
      REALIGN_CHECK(l.first_device >= 0 && l.first_device + l.size() <= n_devices) << to_string(l);
      bounds.push_back(l.first_device);
      bounds.push_back(l.first_device + l.size());
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    free.assign(bounds.size() - 1, 0.0);
    busy.assign(bounds.size() - 1, 0.0);
  }
  // The segment that starts at `device`, which must be a boundary.
  size_t segment_at(int device) const {
    const auto it = std::lower_bound(bounds.begin(), bounds.end(), device);
    REALIGN_CHECK(it != bounds.end() && *it == device) << "device " << device << " is not a segment boundary";
    return size_t(it - bounds.begin());
  }
  double start_on(int first, int n) const {
    if (n <= 0) return 0;
    double m = 0;
    for (size_t k = segment_at(first); bounds[k] < first + n; ++k) m = std::max(m, free[k]);
    return m;
  }
  // Per segment, only where a generation may start its share early (DataflowGraph::staleness_share < 1):
  // when it is free but for the steps' own work (kind "host"), which holds the trainer's devices, not a
  // streaming generator's.
  std::vector<double> work_free;
  double work_start_on(int first, int n) const {
    double m = 0;
    for (size_t k = segment_at(first); bounds[k] < first + n; ++k) m = std::max(m, work_free[k]);
    return m;
  }
  void occupy(const std::string& name, const char* kind, int first, int n, double start, double end,
              double bytes) {
    size_t k = segment_at(first);
    const bool step_work = !work_free.empty() && std::strcmp(kind, "host") == 0;
    for (; bounds[k] < first + n; ++k) {
      free[k] = end;
      busy[k] += end - start;
      if (!work_free.empty() && !step_work) work_free[k] = end;
    }
    REALIGN_CHECK(bounds[k] == first + n) << "device " << first + n << " is not a segment boundary";
    if (events) events->push_back(TimelineEvent{name, kind, first, n, start, end, bytes, iteration});
  }
};

struct Simulator::RunState {
  explicit RunState(DeviceTimelines timelines) : tl(std::move(timelines)) {}
  DeviceTimelines tl;
  std::vector<bool> offloaded;     // per model
  std::vector<Layout> home;        // per model
  std::vector<double> persistent;  // per device
  // With generation turns only (empty otherwise), per device: the models' home state, a part of
  // `persistent`; the largest need of a generate call's turn (persistent state but the homes, plus the
  // call's transient need), and that call.
  std::vector<double> home_bytes;
  std::vector<double> turn;
  std::vector<int> turn_call;
  std::vector<double> transient;    // per device: the largest transient need of a call instance
  std::vector<int> transient_call;  // per device: that call
  std::vector<bool> copy;           // per call: takes a reallocated or loaded weight copy
  std::vector<bool> held;           // per call: its copy stays on its devices between calls (staleness)
  std::vector<double> call_peak;    // per call: its devices' peak memory during it (< 0: not placed yet)
  // The instances' ends, [iteration * calls + call] (iterations 1-based, < 0: not placed); one flat array
  // allocated once per simulation, which the search runs many times.
  std::vector<double> end;
  size_t calls = 0;

  double& end_at(int call, int64_t iteration) {
    const size_t k = size_t(iteration) * calls + size_t(call);
    REALIGN_CHECK(iteration >= 1 && k < end.size()) << "call " << call << " of iteration " << iteration;
    return end[k];
  }
  double end_of(int call, int64_t iteration) {
    if (iteration < 1) return 0;  // before the first iteration: the initial weights, the dataset
    const double e = end_at(call, iteration);
    REALIGN_CHECK(e >= 0) << "call " << call << " of iteration " << iteration << " is not placed yet";
    return e;
  }
};

}  // namespace realign
