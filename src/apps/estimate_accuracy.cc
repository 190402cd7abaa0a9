#include "apps/estimate_accuracy.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/check.h"
#include "core/rng.h"
#include "search/planner.h"
#include "search/presets.h"
#include "search/simulator_evaluator.h"

namespace realign::apps {
namespace {

std::string key_of(const ExecutionPlan& plan) { return to_json(plan).at("mfcs").dump(); }

}  // namespace

std::vector<PlanToMeasure> plans_to_measure(const RunConfig& config, Simulator& simulator, int n,
                                            uint64_t seed) {
  std::vector<PlanToMeasure> out;
  std::set<std::string> seen;
  const int devices = config.cluster.n_devices();
  auto runnable = [&](const ExecutionPlan& p) {
    for (const auto& a : p.assignments)
      if (!runtime_limit_problem(config.graph, a).empty()) return false;
    return simulator.run(p).fits;
  };
  auto add = [&](const std::string& name, ExecutionPlan plan) {
    if (int(out.size()) >= n || !runnable(plan) || !seen.insert(key_of(plan)).second) return;
    plan.name = name;
    out.push_back({name, plan});
  };
  SimulatorEvaluator evaluator(simulator);
  for (const std::string& name : preset_names())
    if (auto plan = make_preset(name, config.graph, config.cluster, evaluator, true)) add(name, *plan);
  // The plan `realign train plan.mode=search` would run.
  PlanOptions search = config.plan;
  search.mode = "search";
  search.candidates.runtime_limits = true;
  add("searched", plan_iteration(config.graph, config.cluster, evaluator, search).plan);

  // Random plans: each call a random mesh (an aligned power-of-two block) and a random valid strategy on it.
  Rng rng(seed);
  std::vector<int> sizes;
  for (int s = 1; s <= devices; s *= 2)
    if (s <= config.cluster.devices_per_node || s % config.cluster.devices_per_node == 0) sizes.push_back(s);
  for (int attempt = 0; attempt < 2000 && int(out.size()) < n; ++attempt) {
    ExecutionPlan plan;
    bool ok = true;
    for (const Mfc& mfc : config.graph.mfcs) {
      const ModelSpec& spec = config.graph.model(mfc.model).spec;
      const int size = sizes[size_t(rng.uniform_int(int64_t(sizes.size())))];  // train calls too: any mesh
      const int first = size * int(rng.uniform_int(devices / size));
      std::vector<Strategy> strategies = enumerate_strategies(mfc, spec, config.cluster, size);
      if (strategies.empty()) {
        ok = false;
        break;
      }
      plan.assignments.push_back({mfc.name, DeviceMesh{first, size},
                                  strategies[size_t(rng.uniform_int(int64_t(strategies.size())))]});
    }
    if (!ok) continue;
    try {
      validate_plan(config.graph, config.cluster, plan);
    } catch (const Error&) {
      continue;
    }
    add("random-" + std::to_string(out.size()), plan);
  }
  return out;
}

double relative_error(double estimate, double measured) { return std::abs(estimate - measured) / measured; }

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t m = values.size() / 2;
  return values.size() % 2 ? values[m] : (values[m - 1] + values[m]) / 2;
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return denom > 0 ? (concordant - discordant) / denom : 0;
}

RoundAgreement round_agreement(const std::vector<std::vector<double>>& times,
                               const std::vector<double>& estimated) {
  std::vector<double> taus;
  for (size_t r = 0; r < times.size(); ++r) {
    REALIGN_CHECK(times[r].size() == estimated.size()) << "round " << r;
    for (size_t q = r + 1; q < times.size(); ++q) taus.push_back(kendall_tau(times[r], times[q]));
  }
  RoundAgreement out;
  if (taus.empty()) return out;
  for (size_t i = 0; i < estimated.size(); ++i)
    for (size_t j = i + 1; j < estimated.size(); ++j) {
      auto order = [&](const std::vector<double>& t) { return t[i] < t[j] ? -1 : t[i] > t[j] ? 1 : 0; };
      const int first = order(times[0]);
      const bool alike = first != 0 && std::all_of(times.begin(), times.end(),
                                                   [&](const auto& t) { return order(t) == first; });
      if (!alike) continue;
      ++out.resolved_pairs;
      if (order(estimated) == first) ++out.estimate_agrees;
    }
  out.pairs = int(taus.size());
  out.min = *std::min_element(taus.begin(), taus.end());
  out.max = *std::max_element(taus.begin(), taus.end());
  out.median = median(std::move(taus));
  return out;
}

}  // namespace realign::apps
