#include "apps/frontier_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "apps/engine_report.h"
#include "apps/plan_report.h"
#include "core/units.h"

namespace realign::apps {
namespace {

std::string layout_summary(const DataflowGraph& g, const ExecutionPlan& plan) {
  std::string out;
  for (size_t i = 0; i < plan.assignments.size() && i < g.mfcs.size(); ++i) {
    const MfcAssignment& a = plan.assignments[i];
    const Layout l = a.layout();
    out += (out.empty() ? "" : ", ") + g.mfcs[i].name + " " + to_string(l);
  }
  return out;
}

double mean_idle(const SimulationResult& r) {
  if (r.device_idle_fraction.empty()) return 0;
  return std::accumulate(r.device_idle_fraction.begin(), r.device_idle_fraction.end(), 0.0) /
         double(r.device_idle_fraction.size());
}

}  // namespace

FrontierReport make_frontier_report(const RunConfig& config, const std::string& engine, bool within_cluster) {
  const auto t0 = std::chrono::steady_clock::now();
  FrontierReport report;
  report.config = &config;
  report.engine = engine;
  report.within_cluster = within_cluster;
  report.objective = config.plan.objective;
  std::vector<int64_t> sizes = frontier_sizes(config.cluster, config.plan.frontier);
  if (within_cluster) {
    std::vector<int64_t> held;
    for (int64_t s : sizes)
      if (s <= config.cluster.n_devices()) held.push_back(s);
    sizes = held;
  }
  report.budget_s = kFrontierBudgetFactor * config.plan.search.time_budget_s;
  // The default sizes go on doubling, up to kMaxExtraSizes more, while fewer than kMinFittingSizes fit (a
  // workload too big for a quarter of its cluster); the budget's shares count them from the start.
  const bool extend = !within_cluster && config.plan.frontier.nodes.empty() && config.plan.frontier.devices.empty();
  const double share = report.budget_s / double(sizes.size() + (extend ? kMaxExtraSizes : 0));
  const int64_t samples = config.algorithm.batch.prompts * config.algorithm.batch.samples_per_prompt;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int64_t devices = sizes[k];
    RunConfig c = config;
    c.cluster = cluster_of_size(config.cluster, devices);
    c.plan.search.time_budget_s = share;
    FrontierPoint p;
    p.devices = devices;
    p.staleness = config.graph.staleness;
    p.config_size = devices == config.cluster.n_devices();
    std::string problem;
    try {
      if (engine.empty()) {
        const PlanReport r = make_plan_report(c, "");
        p.fits = r.simulation.fits;
        p.iteration_time_s = r.simulation.iteration_time_s;
        p.idle_share = mean_idle(r.simulation);
        p.layout = layout_summary(c.graph, r.planner.plan);
        if (!p.fits) problem = r.simulation.oom_report;
      } else {
        const EngineReport r = make_engine_report(c, engine);
        p.fits = r.search.plan && r.fits;
        if (p.fits) {
          p.iteration_time_s = r.estimate.iteration_time_s;
          p.idle_share = mean_idle(r.estimate.simulation);
          p.layout = layout_summary(c.graph, *r.search.plan);
        } else {
          problem = r.problem;
        }
      }
    } catch (const Error& e) {
      // A size the workload cannot take at all (a layout the model cannot be cut to): a point without plan.
      problem = e.what();
    }
    price_point(p, samples);
    report.points.push_back(p);
    report.problems.push_back(problem);
    const int64_t fitting = std::count_if(report.points.begin(), report.points.end(),
                                          [](const FrontierPoint& q) { return q.fits; });
    if (extend && k + 1 == sizes.size() && fitting < kMinFittingSizes &&
        sizes.size() < kDefaultSizes + kMaxExtraSizes && sizes.back() * 2 <= kMaxDevices)
      sizes.push_back(sizes.back() * 2);
  }
  mark_frontier(report.points, config.plan.frontier.knee_gain);
  report.chosen = choose_point(report.points, report.objective);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

std::string format_frontier(const FrontierReport& r) {
  const RunConfig& c = *r.config;
  std::string out;
  char buf[512];
  const int64_t own = c.cluster.n_devices();
  std::snprintf(buf, sizeof buf,
                "%s frontier of %s on %s devices (%s): %zu sizes from %lld to %lld devices (the config's %lld: "
                "%s), planned in %s of a %s budget (%.0fx plan.time_budget_s)\n",
                r.engine.empty() ? "realign's" : (r.engine + "'s").c_str(), to_string(c.graph.algorithm).c_str(),
                c.cluster.device.name.c_str(), c.graph.staleness > 0 ? "asynchronous" : "synchronous",
                r.points.size(), r.points.empty() ? 0LL : (long long)r.points.front().devices,
                r.points.empty() ? 0LL : (long long)r.points.back().devices, (long long)own,
                c.plan.frontier.nodes.empty() && c.plan.frontier.devices.empty()
                    ? (r.within_cluster ? "a quarter of it to all of it"
                       : r.points.size() > kDefaultSizes
                           ? "a quarter of it to four times it, doubled on while fewer than four sizes fit"
                           : "a quarter of it to four times it")
                    : "plan.frontier's sizes",
                format_seconds(r.seconds).c_str(), format_seconds(r.budget_s).c_str(), kFrontierBudgetFactor);
  out += buf;
  std::snprintf(buf, sizeof buf, "\n%8s %12s %14s %16s %6s  %s\n", "devices", "s/iteration", "GPU-h/iteration",
                "GPU-h/1k samples", "idle", "");
  out += buf;
  for (size_t i = 0; i < r.points.size(); ++i) {
    const FrontierPoint& p = r.points[i];
    if (!p.fits) {
      std::snprintf(buf, sizeof buf, "%8lld %12s  %s\n", (long long)p.devices, "no plan", r.problems[i].c_str());
      out += buf;
      continue;
    }
    std::string marks;
    if (p.pareto) marks += " pareto";
    if (p.knee) marks += " knee";
    if (p.config_size) marks += " config";
    if (p.chosen) marks += " <- " + to_string(r.objective);
    std::snprintf(buf, sizeof buf, "%8lld %12s %14.3f %16.4f %5.0f%% %s\n", (long long)p.devices,
                  format_seconds(p.iteration_time_s).c_str(), p.gpu_hours_per_iteration,
                  p.gpu_hours_per_1k_samples, 100 * p.idle_share, marks.c_str());
    out += buf;
    out += "         " + p.layout + "\n";
  }
  std::snprintf(buf, sizeof buf,
                "\npareto: no other size is as fast and as cheap; knee: the last size reached while each step to a "
                "faster one cut the time by at least %.2g%% per 1%% more GPU-hours (plan.frontier.knee_gain)\n",
                c.plan.frontier.knee_gain);
  out += buf;
  return out;
}

Json frontier_json(const FrontierReport& r) {
  Json j;
  j["objective"] = to_string(r.objective);
  if (!r.engine.empty()) j["engine"] = r.engine;
  j["budget_s"] = r.budget_s;
  j["seconds"] = r.seconds;
  j["frontier"] = Json::array();
  for (size_t i = 0; i < r.points.size(); ++i) {
    const FrontierPoint& p = r.points[i];
    Json q = {{"devices", p.devices}, {"fits", p.fits}, {"staleness", p.staleness}};
    if (p.fits) {
      q["iteration_time_s"] = p.iteration_time_s;
      q["gpu_hours_per_iteration"] = p.gpu_hours_per_iteration;
      q["gpu_hours_per_1k_samples"] = p.gpu_hours_per_1k_samples;
      q["idle_share"] = p.idle_share;
      q["layout"] = p.layout;
      q["pareto"] = p.pareto;
      q["knee"] = p.knee;
      q["chosen"] = p.chosen;
    } else {
      q["problem"] = r.problems[i];
    }
    q["config_size"] = p.config_size;
    j["frontier"].push_back(q);
  }
  return j;
}

}  // namespace realign::apps
