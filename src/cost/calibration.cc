#include "cost/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/check.h"
#include "core/error.h"
#include "cost/simulator.h"

namespace realign {
namespace {

constexpr double kOff = 1e30;       // a rate so high that its part of any estimate is zero
constexpr double kMinScale = 1e-3;  // fitted factors stay positive: a profile's coefficients must be
constexpr double kMaxScale = 1e4;
constexpr double kMinIterationOverhead = 1e-6;  // seconds; positive, as every coefficient
// Weight of the prior on the log factors, relative to the sum of the squared targets: a factor of e costs
// as much as a 1% error on every call.
constexpr double kPrior = 1e-4;

// Scales the coefficients of `group` by `s` (times take s times longer); s = 0 switches the group off.
void scale_group(HardwareProfile& p, const std::string& group, double s, const std::string& note) {
  auto slower_time = [&](Coefficient& c) {
    c.value *= s;
    if (!note.empty()) c.source = note + "; was: " + c.source;
  };
  // A rate is peak * efficiency. An efficiency above 1 is not a fraction any more: the excess moves into
  // the peak, so the product is what the fit asked for.
  auto slower_rate = [&](Coefficient& peak, std::vector<Coefficient*> efficiencies) {
    if (s == 0) {
      peak.value = kOff;
      return;
    }
    double top = 0;
    for (Coefficient* e : efficiencies) top = std::max(top, e->value / s);
    const double into_peak = std::max(1.0, top);
    for (Coefficient* e : efficiencies) {
      e->value = e->value / s / into_peak;
      if (!note.empty()) e->source = note + "; was: " + e->source;
    }
    if (into_peak > 1) {
      peak.value *= into_peak;
      if (!note.empty())
        peak.source = note + " (efficiency above 1 moved into the peak); was: " + peak.source;
    }
  };
  if (group == "compute") {
    slower_rate(p.peak_flops, {&p.gemm_efficiency, &p.attention_efficiency});  // pass_efficiency stays
  } else if (group == "memory") {
    slower_rate(p.memory_bandwidth, {&p.decode_bandwidth_efficiency});
  } else if (group == "latency") {
    slower_time(p.intra_node_latency_s);
    slower_time(p.inter_node_latency_s);
    slower_time(p.collective_overhead_s);
  } else if (group == "oversubscription") {
    slower_time(p.oversubscribed_wait_s);
  } else if (group == "bandwidth") {
    for (Coefficient* b :
         {&p.intra_node_bandwidth, &p.intra_node_alltoall_bandwidth, &p.inter_node_bandwidth}) {
      b->value = s == 0 ? kOff : b->value / s;
      if (!note.empty()) b->source = note + "; was: " + b->source;
    }
  } else if (group == "launch") {
    slower_time(p.layer_launch_overhead_s);
  } else if (group == "call") {
    slower_time(p.call_overhead_s);
  } else if (group == "step") {
    slower_time(p.step_overhead_s);
  } else if (group == "decode") {
    slower_time(p.decode_step_overhead_s);
  } else {
    throw Error("calibration", "unknown coefficient group " + group);
  }
}

double estimate(const DataflowGraph& g, const Cluster& c, const HardwareProfile& p,
                const CallMeasurement& m) {
  return estimate_call(g, c, p, m.mfc, m.assignment, m.busy_ranks).time_s;
}

// The upper median (the fit's figures; errors of calls or of plans).
double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

double median_error(const DataflowGraph& g, const Cluster& c, const HardwareProfile& p,
                    const std::vector<CallMeasurement>& calls) {
  std::vector<double> e;
  for (const CallMeasurement& m : calls) e.push_back(std::abs(estimate(g, c, p, m) - m.seconds) / m.seconds);
  return median_of(std::move(e));
}

// The factors s_g = exp(u_g) that minimise sum_r (sum_g a_rg s_g - b_r)^2 + prior * sum_g u_g^2, each within
// [kMinScale, kMaxScale], by coordinate descent (each step a golden-section search along one u_g, where the
// objective is unimodal). The prior, on the log of each factor, keeps the start profile where the
// measurements cannot tell groups apart: on small CPU models the per-call and per-step overheads and the
// compute time grow together over plans, and an unregularised fit traded one for the other by factors of
// 1000 (compute x0.001, call x1250) for a residual a fraction of a percent smaller.
std::vector<double> fit_log_factors(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                                    const std::vector<int>& active, double prior) {
  const size_t n_groups = a.empty() ? 0 : a[0].size();
  std::vector<double> u(n_groups, 0.0);
  auto objective = [&](const std::vector<double>& v) {
    double f = 0;
    for (size_t r = 0; r < a.size(); ++r) {
      double fit = 0;
      for (size_t g = 0; g < n_groups; ++g) fit += a[r][g] * std::exp(v[g]);
      f += (fit - b[r]) * (fit - b[r]);
    }
    for (int g : active) f += prior * v[size_t(g)] * v[size_t(g)];
    return f;
  };
  const double lo = std::log(kMinScale), hi = std::log(kMaxScale), golden = (std::sqrt(5.0) - 1) / 2;
  double current = objective(u);
  for (int sweep = 0; sweep < 200; ++sweep) {
    const double before = current;
    for (int g : active) {
      std::vector<double> v = u;
      auto at = [&](double x) {
        v[size_t(g)] = x;
        return objective(v);
      };
      double l = lo, h = hi, x1 = h - golden * (h - l), x2 = l + golden * (h - l);
      double f1 = at(x1), f2 = at(x2);
      while (h - l > 1e-9) {
        if (f1 < f2)
          h = x2, x2 = x1, f2 = f1, x1 = h - golden * (h - l), f1 = at(x1);
        else
          l = x1, x1 = x2, f1 = f2, x2 = l + golden * (h - l), f2 = at(x2);
      }
      const double x = (l + h) / 2, fx = at(x);
      if (fx < current) u[size_t(g)] = x, current = fx;
    }
    if (before - current <= 1e-12 * std::max(before, 1e-30)) break;
  }
  std::vector<double> s(n_groups, 1.0);
  for (int g : active) s[size_t(g)] = std::exp(u[size_t(g)]);
  return s;
}

// Where a fitted factor sits at a bound of the fit: "lower", "upper", or empty inside.
std::string bound_of(double s) {
  if (std::abs(std::log(s / kMinScale)) < 1e-6) return "lower";
  if (std::abs(std::log(s / kMaxScale)) < 1e-6) return "upper";
  return "";
}

// The warning for a group fitted to a bound of the fit: the group, the factor and the coefficients it set.
std::string bound_note(const HardwareProfile& start, const std::string& group, double s) {
  HardwareProfile alone = start;
  scale_group(alone, group, s, "");
  std::string names;
  const auto before = start.coefficients(), after = std::as_const(alone).coefficients();
  for (size_t i = 0; i < before.size(); ++i)
    if (before[i].second->value != after[i].second->value)
      names += std::string(names.empty() ? "" : ", ") + before[i].first;
  const bool lower = bound_of(s) == "lower";
  char factor[32];
  std::snprintf(factor, sizeof factor, "x%g", s);
  return group + " (" + names + "): the fitted time factor " + factor + " is the fit's " +
         (lower ? "lower" : "upper") + " bound, not a value the measurements determined" +
         (lower ? "; the term is in effect switched off" : "");
}

}  // namespace

std::vector<std::string> calibration_groups() {
  return {"compute", "memory", "latency", "oversubscription", "bandwidth", "launch",
          "call",    "step",   "decode"};
}

std::vector<std::vector<double>> call_time_parts(const DataflowGraph& graph, const Cluster& cluster,
                                                 const HardwareProfile& profile,
                                                 const std::vector<CallMeasurement>& calls) {
  const std::vector<std::string> groups = calibration_groups();
  std::vector<std::vector<double>> parts(calls.size(), std::vector<double>(groups.size(), 0.0));
  for (size_t g = 0; g < groups.size(); ++g) {
    HardwareProfile only = profile;
    for (size_t o = 0; o < groups.size(); ++o)
      if (o != g) scale_group(only, groups[o], 0.0, "");
    for (size_t i = 0; i < calls.size(); ++i) parts[i][g] = estimate(graph, cluster, only, calls[i]);
  }
  return parts;
}

Calibration calibrate(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& start,
                      const std::vector<CallMeasurement>& calls, const std::string& evidence) {
  if (calls.size() < 2)
    throw Error("calibration", "needs at least 2 measured calls, got " + std::to_string(calls.size()));
  for (const CallMeasurement& m : calls)
    if (!(m.seconds > 0))
      throw Error("calibration", "a measured call took " + std::to_string(m.seconds) + " s");
  const std::vector<std::string> groups = calibration_groups();
  const auto parts = call_time_parts(graph, cluster, start, calls);
  // Error relative to the call's iteration time (or its own time when that is unknown): row i of A is call
  // i's parts over that time, the target its measured share of it.
  std::vector<std::vector<double>> a;
  std::vector<double> b;
  for (size_t i = 0; i < calls.size(); ++i) {
    const double scale = calls[i].iteration_s > 0 ? calls[i].iteration_s : calls[i].seconds;
    std::vector<double> row;
    for (double part : parts[i]) row.push_back(part / scale);
    a.push_back(row);
    b.push_back(calls[i].seconds / scale);
  }
  std::vector<int> active;
  for (size_t g = 0; g < groups.size(); ++g) {
    double sum = 0;
    for (const auto& row : a) sum += row[g];
    if (sum > 1e-9) active.push_back(int(g));
  }
  if (active.empty()) throw Error("calibration", "the measured calls do not determine any factor");
  double scale_of_data = 0;
  for (double v : b) scale_of_data += v * v;
  const std::vector<double> best = fit_log_factors(a, b, active, kPrior * scale_of_data);

  Calibration out;
  out.profile = start;
  for (size_t g = 0; g < groups.size(); ++g) {
    const bool fitted = std::find(active.begin(), active.end(), int(g)) != active.end();
    const double s = fitted ? best[g] : 1.0;
    out.scales.push_back({groups[g], s, fitted});
    if (!fitted) continue;
    const std::string bound = bound_of(s);
    if (!bound.empty()) out.notes.push_back(bound_note(start, groups[g], s));
    scale_group(
        out.profile, groups[g], s,
        "calibrated: " + groups[g] + " time x" + std::to_string(s) +
            (bound.empty() ? "" : " (the fit's " + bound + " bound: not determined by the measurements)") +
            ", " + evidence);
  }
  out.median_error_before = median_error(graph, cluster, start, calls);
  out.median_error_after = median_error(graph, cluster, out.profile, calls);
  return out;
}

HardwareProfile fit_iteration_overhead(const DataflowGraph& graph, const Cluster& cluster,
                                       HardwareProfile profile, const std::vector<ExecutionPlan>& plans,
                                       const std::vector<double>& measured, const std::string& evidence) {
  REALIGN_CHECK(plans.size() == measured.size() && !plans.empty());
  profile.iteration_overhead_s.value = kMinIterationOverhead;
  Simulator simulator(graph, cluster, profile);
  // sum_i |sim_i + o - m_i| / m_i is least at the median of the residuals m_i - sim_i weighted by 1 / m_i.
  std::vector<std::pair<double, double>> residuals;  // (residual, weight)
  double total = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    residuals.emplace_back(measured[i] - simulator.run(plans[i]).iteration_time_s, 1.0 / measured[i]);
    total += 1.0 / measured[i];
  }
  std::sort(residuals.begin(), residuals.end());
  double seen = 0, overhead = residuals.back().first;
  for (const auto& [r, w] : residuals) {
    seen += w;
    if (seen >= total / 2) {
      overhead = r;
      break;
    }
  }
  profile.iteration_overhead_s = {std::max(kMinIterationOverhead, overhead + kMinIterationOverhead),
                                  "calibrated: what " + std::to_string(plans.size()) +
                                      " measured iterations took beyond their simulated calls, moves and "
                                      "reallocations (weighted median" +
                                      (overhead > 0 ? "" : "; none: the fit's floor") + "), " + evidence};
  return profile;
}

Calibration calibrate_to_iterations(const DataflowGraph& graph, const Cluster& cluster,
                                    const HardwareProfile& start, const std::vector<CallMeasurement>& calls,
                                    const std::vector<ExecutionPlan>& plans,
                                    const std::vector<double>& measured, const std::string& evidence) {
  REALIGN_CHECK(plans.size() == measured.size() && !plans.empty());
  // idle_worker_load slows every call on a shared node, not one part of it, so the group fit cannot set it:
  // each of a few loads gets its own fit, and the load whose profile predicts the measured iterations best
  // (median relative error; then the calls' median error) is kept.
  std::vector<double> loads = {start.idle_worker_load.value};
  if (start.compute_slots_per_node.value < double(cluster.devices_per_node))
    loads = {0.0, 0.25, 0.5, 0.75, 1.0};
  Calibration best;
  double best_error = 0;
  for (double load : loads) {
    HardwareProfile at = start;
    if (load != start.idle_worker_load.value)
      at.idle_worker_load = {load,
                             "calibrated: of 0, 0.25, 0.5, 0.75 and 1, the load whose fit predicts the "
                             "measured iterations best, " +
                                 evidence + "; was: " + start.idle_worker_load.source};
    Calibration c = calibrate(graph, cluster, at, calls, evidence);
    c.profile = fit_iteration_overhead(graph, cluster, c.profile, plans, measured, evidence);
    Simulator simulator(graph, cluster, c.profile);
    std::vector<double> errors;
    for (size_t i = 0; i < plans.size(); ++i)
      errors.push_back(std::abs(simulator.run(plans[i]).iteration_time_s - measured[i]) / measured[i]);
    const double error = median_of(std::move(errors));
    if (loads.size() > 1) c.idle_worker_load = load;
    if (load == loads.front() || error < best_error ||
        (error == best_error && c.median_error_after < best.median_error_after))
      best = c, best_error = error;
  }
  best.median_error_before = median_error(graph, cluster, start, calls);
  if (best.profile.iteration_overhead_s.value <= kMinIterationOverhead)
    best.notes.push_back(
        "iteration_overhead_s: at the fit's floor (1e-06 s): the measured iterations took no "
        "longer than their simulated calls, moves and reallocations");
  return best;
}

}  // namespace realign
