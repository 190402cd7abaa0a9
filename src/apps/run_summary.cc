#include "apps/run_summary.h"

#include <algorithm>
#include <cstdio>

#include "core/units.h"

namespace realign::apps {

MeasuredIterations measure_iterations(const std::vector<Json>& metrics) {
  std::vector<double> seconds;
  double bytes = 0;
  bool first = true;
  for (const Json& r : metrics) {
    if (r.value("stage", "") != "rl" || !r.contains("time/step_s")) continue;
    if (first) {  // the first RL step builds the copies and warms the allocator
      first = false;
      continue;
    }
    seconds.push_back(r["time/step_s"].get<double>());
    bytes += r.value("realloc/bytes", 0.0);
  }
  MeasuredIterations m;
  m.steps = int(seconds.size());
  if (seconds.empty()) return m;
  std::nth_element(seconds.begin(), seconds.begin() + long(seconds.size() / 2), seconds.end());
  m.seconds = seconds[seconds.size() / 2];
  m.realloc_bytes = bytes / double(m.steps);
  return m;
}

std::string format_run_summary(const PlanReport& report, const std::vector<PlanMeasurement>& rows) {
  const DataflowGraph& g = report.config->graph;
  const ExecutionPlan& plan = report.planner.plan;
  std::string out =
      "\nplan (" + plan.name + ", " + std::to_string(report.config->cluster.n_devices()) +
      " workers): each call on its devices with its own data/tensor/pipeline parallel degrees\n";
  char line[256];
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const MfcAssignment& a = plan.assignments[i];
    std::snprintf(line, sizeof line, "  %-14s devices %-5s dp %d tp %d pp %d%s\n", g.mfcs[i].name.c_str(),
                  to_string(a.mesh).c_str(), a.strategy.dp, a.strategy.tp, a.strategy.pp,
                  a.strategy.zero1 ? " zero1" : "");
    out += line;
  }
  out += "seconds per RL iteration, measured (median) and estimated by the cost model (" +
         report.profile_name + "):\n";
  for (const PlanMeasurement& r : rows) {
    if (r.measured.steps == 0) continue;
    std::snprintf(
        line, sizeof line, "  %-18s measured %-9s estimated %-9s reallocated %s per iteration (%d steps)\n",
        r.label.c_str(), format_seconds(r.measured.seconds).c_str(), format_seconds(r.estimated_s).c_str(),
        format_bytes(r.measured.realloc_bytes).c_str(), r.measured.steps);
    out += line;
  }
  if (rows.size() > 1 && rows[0].measured.steps > 0 && rows[1].measured.steps > 0 &&
      rows[0].measured.seconds > 0) {
    std::snprintf(line, sizeof line, "  the %s ran %.2fx as fast as the %s\n", rows[0].label.c_str(),
                  rows[1].measured.seconds / rows[0].measured.seconds, rows[1].label.c_str());
    out += line;
  }
  return out;
}

}  // namespace realign::apps
