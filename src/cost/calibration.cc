#include "cost/calibration.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/error.h"
#include "cost/simulator.h"

namespace realign {
namespace {

constexpr double kOff = 1e30;       // a rate so high that its part of any estimate is zero
constexpr double kMinScale = 1e-3;  // fitted factors stay positive: a profile's coefficients must be

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
  } else if (group == "bandwidth") {
    for (Coefficient* b : {&p.intra_node_bandwidth, &p.inter_node_bandwidth}) {
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

double median_error(const DataflowGraph& g, const Cluster& c, const HardwareProfile& p,
                    const std::vector<CallMeasurement>& calls) {
  std::vector<double> e;
  for (const CallMeasurement& m : calls) e.push_back(std::abs(estimate(g, c, p, m) - m.seconds) / m.seconds);
  std::nth_element(e.begin(), e.begin() + long(e.size() / 2), e.end());
  return e[e.size() / 2];
}

// Least squares of A x = b over the columns in `cols` (normal equations, Gaussian elimination with partial
// pivoting); false when singular.
bool least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                   const std::vector<int>& cols, std::vector<double>& x) {
  const size_t k = cols.size();
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
  for (size_t r = 0; r < a.size(); ++r)
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) m[i][j] += a[r][size_t(cols[i])] * a[r][size_t(cols[j])];
      m[i][k] += a[r][size_t(cols[i])] * b[r];
    }
  for (size_t i = 0; i < k; ++i) {
    size_t pivot = i;
    for (size_t r = i + 1; r < k; ++r)
      if (std::abs(m[r][i]) > std::abs(m[pivot][i])) pivot = r;
    if (std::abs(m[pivot][i]) < 1e-12) return false;
    std::swap(m[i], m[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == i) continue;
      const double f = m[r][i] / m[i][i];
      for (size_t j = i; j <= k; ++j) m[r][j] -= f * m[i][j];
    }
  }
  x.assign(k, 0.0);
  for (size_t i = 0; i < k; ++i) x[i] = m[i][k] / m[i][i];
  return true;
}

}  // namespace

std::vector<std::string> calibration_groups() {
  return {"compute", "memory", "latency", "bandwidth", "launch", "call", "step", "decode"};
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
  // Non-negative least squares by trying every subset of the active groups (at most 2^7 small systems).
  std::vector<double> best(groups.size(), 1.0);
  double best_residual = INFINITY;
  for (uint32_t mask = 1; mask < (1u << active.size()); ++mask) {
    std::vector<int> cols;
    for (size_t b = 0; b < active.size(); ++b)
      if (mask & (1u << b)) cols.push_back(active[b]);
    std::vector<double> x;
    if (!least_squares(a, b, cols, x)) continue;
    if (std::any_of(x.begin(), x.end(), [](double v) { return v < 0; })) continue;
    double residual = 0;
    for (size_t r = 0; r < a.size(); ++r) {
      double fit = 0;
      for (size_t k = 0; k < cols.size(); ++k) fit += a[r][size_t(cols[k])] * x[k];
      residual += (fit - b[r]) * (fit - b[r]);
    }
    if (residual < best_residual) {
      best_residual = residual;
      std::fill(best.begin(), best.end(), 0.0);
      for (size_t k = 0; k < cols.size(); ++k) best[size_t(cols[k])] = x[k];
    }
  }
  if (!std::isfinite(best_residual))
    throw Error("calibration", "the measured calls do not determine any factor");

  Calibration out;
  out.profile = start;
  for (size_t g = 0; g < groups.size(); ++g) {
    const bool fitted = std::find(active.begin(), active.end(), int(g)) != active.end();
    const double s = fitted ? std::max(kMinScale, best[g]) : 1.0;
    out.scales.push_back({groups[g], s, fitted});
    if (fitted)
      scale_group(out.profile, groups[g], s,
                  "calibrated: " + groups[g] + " time x" + std::to_string(s) + ", " + evidence);
  }
  out.median_error_before = median_error(graph, cluster, start, calls);
  out.median_error_after = median_error(graph, cluster, out.profile, calls);
  return out;
}

HardwareProfile fit_iteration_overhead(const DataflowGraph& graph, const Cluster& cluster,
                                       HardwareProfile profile, const std::vector<ExecutionPlan>& plans,
                                       const std::vector<double>& measured, const std::string& evidence) {
  REALIGN_CHECK(plans.size() == measured.size() && !plans.empty());
  const double kMin = 1e-6;  // coefficients stay positive
  profile.iteration_overhead_s.value = kMin;
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
  profile.iteration_overhead_s = {std::max(kMin, overhead + kMin),
                                  "calibrated: what " + std::to_string(plans.size()) +
                                      " measured iterations took beyond their simulated calls, moves and "
                                      "reallocations (weighted median), " +
                                      evidence};
  return profile;
}

}  // namespace realign
