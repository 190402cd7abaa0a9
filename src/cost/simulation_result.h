// SimulationResult and Timeline: what one iteration of a plan does on the cluster, estimated by the simulator
// or measured by the runtime (both record timelines in the same JSON schema).
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign {

// One bar of the Gantt chart: a call, the reallocation before it, or the data move before it, on a contiguous
// block of devices.
struct TimelineEvent {
  std::string name;  // the call's name ("actor_gen"); its realloc and data events carry the same name
  std::string kind;  // "call", "realloc", "load" (from host memory), "data" or "host" (outside the calls)
  int first_device = 0;
  int n_devices = 1;
  double start_s = 0;
  double end_s = 0;
  double bytes = 0;  // realloc/data: bytes moved (received by this block); call: 0
  // The iteration (1-based) the event belongs to; "host": the iteration whose step it ends. A synchronous
  // iteration is 1; the steady state of overlapping iterations (staleness > 0) holds several.
  int64_t iteration = 1;
  bool operator==(const TimelineEvent& o) const;
};

struct Timeline {
  static constexpr int kVersion = 1;
  int n_devices = 0;
  std::vector<TimelineEvent> events;
  bool operator==(const Timeline& o) const { return n_devices == o.n_devices && events == o.events; }
};

struct CallResult {
  std::string name;
  double start_s = 0;  // the call itself, after its reallocation and data moves
  double end_s = 0;
  double realloc_s = 0;
  double data_s = 0;
  double peak_mem_bytes = 0;  // max over its devices, persistent state included
  // Ranks of its node busy during the call, its own included, on average (Simulator: contention on nodes
  // whose workers share compute slots); 0 where it does not apply.
  double busy_ranks = 0;
  bool operator==(const CallResult& o) const;
};

struct SimulationResult {
  // Staleness 0: one iteration's time. Staleness N > 0: the steady state of overlapping iterations, the time
  // between the ends of two consecutive steps once it no longer changes (Simulator).
  double iteration_time_s = 0;
  int64_t staleness = 0;
  int64_t steps = 1;          // steps simulated (call_schedule.h's step_calls), the timeline's window
  double steady_start_s = 0;  // where the last step starts in the timeline; `calls` are relative to it
  std::vector<CallResult>
      calls;  // in the graph's call order (staleness > 0: their instances of the last step)
  Timeline timeline;
  std::vector<double> device_peak_mem_bytes;
  // With generation turns (Simulator::set_generation_turns), per device: the models' home state, which each
  // turn moves to host memory and back, and the peak during the turns (a part of the peak above); else empty.
  std::vector<double> device_home_bytes;
  std::vector<double> device_turn_peak_mem_bytes;
  std::vector<double> device_idle_fraction;  // of the iteration time (staleness > 0: of the last step)
  double realloc_bytes = 0;                  // all reallocations of an iteration (of the last step)
  double offload_bytes = 0;                  // host-to-device loads of offloaded models (of the last step)
  bool fits = true;
  std::string oom_report;  // empty when fits: "device 3 needs 91.2 GiB during actor_train (limit ...): ..."
  bool operator==(const SimulationResult& o) const;
};

// {"version": 1, "n_devices": N, "events": [{"name", "kind", "first_device", "n_devices", "start_s", "end_s",
// "bytes", "iteration"}, ...]} ("iteration" optional: 1 when absent, as timelines before staleness had it)
Json to_json(const Timeline& t);
Timeline timeline_from_json(const Json& j, const std::string& path);

Json to_json(const SimulationResult& r);
SimulationResult simulation_result_from_json(const Json& j, const std::string& path);

}  // namespace realign
