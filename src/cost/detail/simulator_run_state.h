// One simulation's state, shared by the simulator's files (simulator.cc places calls on the timelines,
// simulator_memory.cc prices what devices hold): per-device timelines, memory and the call instances' ends.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/check.h"
#include "cost/simulator.h"

namespace realign {

// Per-device timelines of one run.
struct DeviceTimelines {
  std::vector<double> free, busy;
  std::vector<TimelineEvent>* events;  // null: times only
  int64_t iteration = 1;               // of the events being placed
  double start_on(int first, int n) const {
    if (n <= 0) return 0;
    return std::max(0.0, *std::max_element(free.begin() + first, free.begin() + first + n));
  }
  void occupy(const std::string& name, const char* kind, int first, int n, double start, double end,
              double bytes) {
    for (int d = first; d < first + n; ++d) {
      free[size_t(d)] = end;
      busy[size_t(d)] += end - start;
    }
    if (events) events->push_back(TimelineEvent{name, kind, first, n, start, end, bytes, iteration});
  }
};

struct Simulator::RunState {
  DeviceTimelines tl;
  std::vector<bool> offloaded;      // per model
  std::vector<Layout> home;         // per model
  std::vector<double> persistent;   // per device
  std::vector<double> transient;    // per device: the largest transient need of a call instance
  std::vector<int> transient_call;  // per device: that call
  std::vector<bool> copy;           // per call: takes a reallocated or loaded weight copy
  std::vector<bool> held;           // per call: its copy stays on its devices between calls (staleness)
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
