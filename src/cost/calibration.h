// Calibration of a HardwareProfile against measured call times: the estimate of a call is (nearly) a sum of
// parts, each proportional to one group of coefficients (compute rate, memory rate, link latency, the wait of
// oversubscribed workers, link bandwidth, per-layer launch overhead, per-call and per-step overhead,
// per-decoding-step overhead). Scaling
// each group by a factor s_g scales its part, so measured times fix the factors by least squares on relative
// error, with a weak prior that keeps each factor near 1 where the measurements cannot tell two groups apart,
// and the fitted profile states the factor and the measurements in every coefficient's source.
//
// This is how the estimator is "calibrated by profiling": runs of real calls (`realign validate --calibrate`)
// set the coefficients, and a second validation on other plans checks the result out of sample.
#pragma once

#include <string>
#include <vector>

#include "cost/call_cost.h"
#include "cost/hardware_profile.h"
#include "plan/execution_plan.h"

namespace realign {

// One call as measured: its index in the graph, its assignment, its measured seconds, and the measured
// iteration time of its plan (0: unknown). With the iteration time, the fit weighs a call's error by its
// share of the iteration, as the iteration-time estimate feels it; without, every call's relative error
// weighs the same.
struct CallMeasurement {
  int mfc = -1;
  MfcAssignment assignment;
  double seconds = 0;
  double iteration_s = 0;
  double busy_ranks = 0;  // the simulation's CallResult::busy_ranks of the call in its plan (0: own ranks)
};

// A coefficient group and its fitted factor (1 = unchanged; < 1 faster than the start profile assumed).
struct GroupScale {
  std::string
      group;  // compute | memory | latency | oversubscription | bandwidth | launch | call | step | decode
  double scale = 1;
  bool fitted = false;  // false when no measured call depends on the group (its coefficients stay)
};

struct Calibration {
  HardwareProfile profile;
  std::vector<GroupScale> scales;
  // The HardwareProfile::idle_worker_load that calibrate_to_iterations chose where the node's workers
  // outnumber its compute slots; -1 where it kept the start profile's.
  double idle_worker_load = -1;
  double median_error_before = 0, median_error_after = 0;  // relative, over the measured calls
  // Warnings, one per coefficient the fit left at one of its bounds (a group's factor at 1e-3 or 1e4, the
  // iteration overhead at its floor): the measurements did not determine it, and a factor at 1e-3 has in
  // effect switched its term off. Each names the group and the coefficients it set; the fitted profile's
  // sources say it too.
  std::vector<std::string> notes;
};

// Each call's estimate split into the group parts, under `profile` (parts[call][group], groups in the
// order of calibration_groups()).
std::vector<std::string> calibration_groups();
std::vector<std::vector<double>> call_time_parts(const DataflowGraph& graph, const Cluster& cluster,
                                                 const HardwareProfile& profile,
                                                 const std::vector<CallMeasurement>& calls);

// Fits the factors and returns the scaled profile. `evidence` ends each changed coefficient's source
// ("fitted to 42 calls of 10 plans on ..."). Throws Error("calibration") with fewer calls than 2.
Calibration calibrate(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& start,
                      const std::vector<CallMeasurement>& calls, const std::string& evidence);

// calibrate, then fit_iteration_overhead, against the measured iteration times of `plans` too. Where a node's
// workers outnumber its compute slots, also chooses HardwareProfile::idle_worker_load, which scales every
// call rather than one part of it: of a few loads, the one whose calibrated profile predicts the measured
// iterations best. `median_error_before` is the start profile's over the calls.
Calibration calibrate_to_iterations(const DataflowGraph& graph, const Cluster& cluster,
                                    const HardwareProfile& start, const std::vector<CallMeasurement>& calls,
                                    const std::vector<ExecutionPlan>& plans,
                                    const std::vector<double>& measured, const std::string& evidence);

// Sets `profile`'s iteration_overhead_s so that the simulated iteration times of `plans` come closest to
// `measured` (least absolute relative error: a weighted median of the residuals), after the calls have been
// fitted. The overhead is what the iteration costs beyond its calls, data moves and reallocations; it stays
// positive. `evidence` ends its source.
HardwareProfile fit_iteration_overhead(const DataflowGraph& graph, const Cluster& cluster,
                                       HardwareProfile profile, const std::vector<ExecutionPlan>& plans,
                                       const std::vector<double>& measured, const std::string& evidence);

}  // namespace realign
