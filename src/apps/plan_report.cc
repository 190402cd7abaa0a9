#include "apps/plan_report.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>

#include "core/units.h"
#include "cost/hardware_profile.h"
#include "cost/simulator.h"
#include "search/simulator_evaluator.h"

namespace realign::apps {

PlanReport make_plan_report(const RunConfig& config, const std::string& plan_file, bool compare) {
  const auto t0 = std::chrono::steady_clock::now();
  PlanReport report;
  report.config = &config;
  const HardwareProfile profile = run_profile(config);
  report.profile_name = profile_name(config);
  Simulator simulator(config.graph, config.cluster, profile);
  SimulatorEvaluator evaluator(simulator);
  PlanOptions options = config.plan;
  if (!plan_file.empty()) {
    options.mode = "file";
    options.file = plan_file;
  }
  compare = compare && takes_staleness(config);
  const double budget = options.search.time_budget_s;
  if (compare) options.search.time_budget_s = budget * kChosenBudgetShare;
  report.planner = plan_iteration(config.graph, config.cluster, evaluator, options);
  if (report.planner.search)
    report.fixed_seconds = std::max(0.0, report.planner.planning_seconds - report.planner.search->seconds);
  report.simulation = simulator.run(report.planner.plan);
  report.phases = step_phases(simulator, report.planner.plan, report.simulation);
  for (const auto& p : report.planner.presets)
    report.preset_simulations.push_back(p.plan ? simulator.run(*p.plan) : SimulationResult{});
  if (compare) {
    // The comparison's searches share what the budget has left (compare_staleness splits it as they go); one
    // costs at least the part of the chosen search that did not shrink with its budget (its candidates), and
    // a variant left less than that is not planned.
    options.search.time_budget_s =
        budget - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<ExecutionPlan> presets;
    for (const PresetOutcome& p : report.planner.presets)
      if (p.plan) presets.push_back(*p.plan);
    report.staleness_estimates =
        compare_staleness(config, options, report.planner.plan, report.simulation.iteration_time_s,
                          report.simulation.fits, report.phases, presets, report.fixed_seconds);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

namespace {

std::string line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return std::string(buf) + "\n";
}

// The graph's first generation call, or null.
const Mfc* generation_call(const DataflowGraph& g) {
  for (const Mfc& m : g.mfcs)
    if (m.kind() == MfcKind::kGenerate) return &m;
  return nullptr;
}

}  // namespace

std::string format_plan_table(const PlanReport& r) {
  const RunConfig& c = *r.config;
  const DataflowGraph& g = c.graph;
  std::string out;
  out += line("%s on %d x %d %s (%d devices); profile: %s", to_string(g.algorithm).c_str(), c.cluster.n_nodes,
              c.cluster.devices_per_node, c.cluster.device.name.c_str(), c.cluster.n_devices(),
              r.profile_name.c_str());
  if (r.planner.search)
    out += line(
        "plan: searched in %s (%lld steps, the best plan found at step %lld; %lld evaluations, seed %llu)",
        format_seconds(r.planner.planning_seconds).c_str(), (long long)r.planner.search->steps,
        (long long)r.planner.search->best_step, (long long)r.planner.search->evaluations,
        (unsigned long long)c.plan.search.seed);
  else
    out += line("plan: %s", r.planner.plan.name.c_str());
  // Over the budget because the search's start alone took its share (not the few milliseconds the simulations
  // after it add).
  const double share =
      c.plan.search.time_budget_s * (r.staleness_estimates.empty() ? 1.0 : kChosenBudgetShare);
  if (r.planner.search && r.seconds > c.plan.search.time_budget_s && r.fixed_seconds >= share)
    out += line(
        "  over plan.time_budget_s (%s): planning took %s, of which forming the presets and candidates "
        "of %d devices %s before the search could start",
        format_seconds(c.plan.search.time_budget_s).c_str(), format_seconds(r.seconds).c_str(),
        c.cluster.n_devices(), format_seconds(r.fixed_seconds).c_str());
  out += "\n";
  // A plan with a mixture-of-experts model shows each call's expert-parallel degree too, and one with context
  // parallelism its cp (a "u" after it: Ulysses).
  bool moe = false, context = false;
  for (const ModelRole& m : g.models) moe |= m.spec.is_moe();
  for (const MfcAssignment& a : r.planner.plan.assignments) context |= a.strategy.cp > 1;
  out += line("%-18s %-7s %-9s %-7s %3s %3s %3s %4s%s%s %-5s %9s %9s %9s %10s", "call", "model", "kind",
              "mesh", "dp", "tp", "pp", "mb", moe ? "  ep" : "", context ? "   cp" : "", "opt", "start",
              "end", "realloc", "peak mem");
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const Mfc& m = g.mfcs[i];
    const MfcAssignment& a = r.planner.plan.assignments[i];
    const CallResult& cr = r.simulation.calls[i];
    // z1: optimizer state sharded over dp (ZeRO-1); rc: activations recomputed.
    const std::string opt = std::string(a.strategy.zero1 ? "z1" : "") +
                            (a.strategy.zero1 && a.strategy.recompute ? "," : "") +
                            (a.strategy.recompute ? "rc" : "");
    char ep[16] = "";  // a column only for mixture-of-experts models
    if (moe) std::snprintf(ep, sizeof ep, " %3d", a.strategy.ep);
    char cp[16] = "";
    if (context)
      std::snprintf(cp, sizeof cp, " %3d%s", a.strategy.cp,
                    a.strategy.cp_kind == ContextParallel::kUlysses ? "u" : " ");
    out += line("%-18s %-7s %-9s %-7s %3d %3d %3d %4d%s%s %-5s %9s %9s %9s %10s", m.name.c_str(),
                to_string(m.model).c_str(), to_string(m.kind()).c_str(), to_string(a.mesh).c_str(),
                a.strategy.dp, a.strategy.tp, a.strategy.pp, a.strategy.micro_batches, ep, cp,
                opt.empty() ? "-" : opt.c_str(), format_seconds(cr.start_s).c_str(),
                format_seconds(cr.end_s).c_str(), format_seconds(cr.realloc_s).c_str(),
                format_bytes(cr.peak_mem_bytes).c_str());
  }
  out += "\n";
  out += line("iteration time: %s%s; reallocated %s per iteration",
              format_seconds(r.simulation.iteration_time_s).c_str(),
              r.simulation.fits ? " (fits in memory)" : " (DOES NOT FIT)",
              format_bytes(r.simulation.realloc_bytes).c_str());
  if (!r.simulation.fits) out += line("  %s", r.simulation.oom_report.c_str());
  if (const Mfc* gen = generation_call(g)) {
    const LengthDistribution& d = gen->generation.lengths;
    if (!d.quantiles.empty())
      out += line("response lengths: %s: mean %.1f, p50 %.0f, p90 %.0f, p99 %.0f, cap %lld; %s batching%s",
                  d.source.c_str(), d.mean, d.quantile(0.5), d.quantile(0.9), d.quantile(0.99),
                  (long long)d.cap, to_string(gen->generation.batching).c_str(),
                  gen->generation.partial_rollout ? ", partial rollouts" : "");
    out += line("%s", describe_generation(r.phases).c_str());
  }
  if (g.staleness > 0)
    out += line(
        "staleness %lld: the steady state of overlapping iterations (%lld steps simulated; start and "
        "end are in the last step)",
        (long long)g.staleness, (long long)r.simulation.steps);
  if (!r.staleness_estimates.empty()) {
    double sync = 0;
    StepPhases sync_phases;
    for (const StalenessEstimate& e : r.staleness_estimates)
      if (e.staleness == 0 && e.fits) sync = e.iteration_time_s, sync_phases = e.phases;
    out +=
        "\ntrain.staleness (iteration i generates with the actor after update i-1-N), each one's best "
        "plan:\n";
    for (const StalenessEstimate& e : r.staleness_estimates) {
      const char* mark = e.chosen ? "   <- this plan" : "";
      const std::string name =
          "staleness " + std::to_string(e.staleness) + (e.partial_rollout ? ", partial rollouts" : "");
      if (e.skipped)
        out += line("  %s: not planned: plan.time_budget_s (%s) was spent; a search of %d devices takes longer "
                    "to start than the time left",
                    name.c_str(), format_seconds(c.plan.search.time_budget_s).c_str(), c.cluster.n_devices());
      else if (!e.fits)
        out += line("  %s: does not fit%s", name.c_str(), mark);
      else if (e.staleness == 0)
        out += line("  staleness 0: %s per iteration (synchronous)%s: %s",
                    format_seconds(e.iteration_time_s).c_str(), mark,
                    describe_generation(e.phases).c_str());
      else if (sync > 0)
        out += line("  %s: %.2fx as fast as synchronous (%s per iteration)%s: %s", name.c_str(),
                    sync / e.iteration_time_s, format_seconds(e.iteration_time_s).c_str(), mark,
                    staleness_reason(e.staleness, e.phases, sync_phases, e.partial_rollout).c_str());
      else
        out += line("  %s: %s per iteration%s", name.c_str(), format_seconds(e.iteration_time_s).c_str(),
                    mark);
    }
  }
  if (!r.planner.plan.offload.empty()) {
    std::string names;
    for (Role m : r.planner.plan.offload) names += (names.empty() ? "" : ", ") + to_string(m);
    out += line("offloaded to host memory between calls: %s (%s loaded per iteration)", names.c_str(),
                format_bytes(r.simulation.offload_bytes).c_str());
  }
  out += "\npresets (estimated iteration time):\n";
  for (size_t i = 0; i < r.planner.presets.size(); ++i) {
    const PresetOutcome& p = r.planner.presets[i];
    const SimulationResult& s = r.preset_simulations[i];
    if (!p.plan) {
      out += line("  %-14s cannot be formed for this graph and cluster", p.name.c_str());
    } else if (!s.fits) {
      out += line("  %-14s does not fit: %s", p.name.c_str(), s.oom_report.c_str());
    } else {
      // The one-layout baselines recompute in train calls as fixed-layout engines do (search/presets.h),
      // except for a cluster realign's runtime runs (runtime_runs), which keeps activations: say which.
      const bool recomputes = std::any_of(p.plan->assignments.begin(), p.plan->assignments.end(),
                                          [](const MfcAssignment& a) { return a.strategy.recompute; });
      out +=
          line("  %-14s %10s   (this plan is %.2fx %s)%s", p.name.c_str(),
               format_seconds(s.iteration_time_s).c_str(), s.iteration_time_s / r.simulation.iteration_time_s,
               s.iteration_time_s >= r.simulation.iteration_time_s ? "faster" : "slower",
               recomputes ? ", recomputing activations in train calls" : "");
    }
  }
  return out;
}

Json plan_report_json(const PlanReport& r) {
  const DataflowGraph& g = r.config->graph;
  Json j;
  j["algorithm"] = to_string(g.algorithm);
  j["devices"] = r.config->cluster.n_devices();
  j["iteration_time_s"] = r.simulation.iteration_time_s;
  j["staleness"] = g.staleness;
  if (!r.staleness_estimates.empty()) {
    Json estimates = Json::object();
    Json reasons = Json::object();
    const StalenessEstimate* sync = nullptr;
    for (const StalenessEstimate& e : r.staleness_estimates)
      if (e.staleness == 0 && e.fits) sync = &e;
    Json skipped = Json::array();
    for (const StalenessEstimate& e : r.staleness_estimates) {
      // "1" for batch-level asynchrony, "1_partial_rollout" for streaming generation.
      const std::string key = std::to_string(e.staleness) + (e.partial_rollout ? "_partial_rollout" : "");
      if (e.skipped) {
        skipped.push_back(key);  // not planned in the time budget
        continue;
      }
      estimates[key] = e.fits ? Json(e.iteration_time_s) : Json(nullptr);
      if (sync && e.fits && e.staleness > 0)
        reasons[key] = staleness_reason(e.staleness, e.phases, sync->phases, e.partial_rollout);
    }
    j["staleness_estimates"] = estimates;
    j["staleness_reasons"] = reasons;
    if (!skipped.empty()) j["staleness_not_planned"] = skipped;
  }
  if (const Mfc* gen = generation_call(g)) {
    Json gj;
    if (!gen->generation.lengths.quantiles.empty()) gj["lengths"] = to_json(gen->generation.lengths);
    gj["batching"] = to_string(gen->generation.batching);
    gj["partial_rollout"] = gen->generation.partial_rollout;
    gj["generation_s"] = r.phases.generation_s;
    gj["tail_s"] = r.phases.generation_tail_s;
    gj["train_s"] = r.phases.train_s;
    gj["generation_idle_share"] = r.phases.generation_idle_share;
    gj["train_idle_share"] = r.phases.train_idle_share;
    j["generation"] = gj;
  }
  j["search_time_s"] = r.planner.planning_seconds;
  j["fits"] = r.simulation.fits;
  if (!r.simulation.fits) j["oom_report"] = r.simulation.oom_report;
  j["realloc_bytes"] = r.simulation.realloc_bytes;
  j["offload_bytes"] = r.simulation.offload_bytes;
  Json presets = Json::object();
  for (size_t i = 0; i < r.planner.presets.size(); ++i) {
    const bool usable = r.planner.presets[i].plan && r.preset_simulations[i].fits;
    presets[r.planner.presets[i].name] =
        usable ? Json(r.preset_simulations[i].iteration_time_s) : Json(nullptr);
  }
  j["presets"] = presets;
  j["mfcs"] = Json::array();
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const MfcAssignment& a = r.planner.plan.assignments[i];
    const CallResult& cr = r.simulation.calls[i];
    j["mfcs"].push_back({{"name", g.mfcs[i].name},
                         {"model", to_string(g.mfcs[i].model)},
                         {"kind", to_string(g.mfcs[i].kind())},
                         {"mesh", to_string(a.mesh)},
                         {"dp", a.strategy.dp},
                         {"tp", a.strategy.tp},
                         {"pp", a.strategy.pp},
                         {"ep", a.strategy.ep},
                         {"cp", a.strategy.cp},
                         {"cp_kind", to_string(a.strategy.cp_kind)},
                         {"micro_batches", a.strategy.micro_batches},
                         {"start_s", cr.start_s},
                         {"end_s", cr.end_s},
                         {"realloc_s", cr.realloc_s},
                         {"peak_mem_bytes", cr.peak_mem_bytes}});
  }
  if (r.planner.search)
    j["search"] = {{"steps", r.planner.search->steps},
                   {"best_step", r.planner.search->best_step},
                   {"accepted", r.planner.search->accepted},
                   {"evaluations", r.planner.search->evaluations},
                   {"seed", r.config->plan.search.seed}};
  j["plan"] = to_json(r.planner.plan);
  return j;
}

}  // namespace realign::apps
