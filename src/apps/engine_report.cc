#include "apps/engine_report.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/units.h"
#include "cost/simulator.h"
#include "engines/pricing.h"

namespace realign::apps {

namespace {

std::string line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return std::string(buf) + "\n";
}

// The role (model) whose call overflows, from the simulator's report, and what the engine would need.
std::string no_fit_message(const EngineReport& r, const SimulationResult& sim) {
  std::string out =
      r.engine->display_name() + ": no plan it can run fits in memory. Its best: " + sim.oom_report;
  if (r.engine->name() == "openrlhf")
    out +=
        " (before ZeRO's savings). Even with the weights sharded over data parallelism (--zero_stage 3, "
        "searched too) it would need more devices, or an engine with tensor/pipeline parallel training "
        "(--engine verl, areal or nemo-rl)";
  else
    out +=
        ". It would need more model parallelism than the engine's rules allow on this cluster, or more "
        "devices";
  return out;
}

// How the engine's estimate departs from realign's simulator: its generation (inside the simulation), weight
// broadcast and ZeRO-3.
std::string pricing_breakdown(const engines::EngineEstimate& e) {
  std::string out = line(
      "  realign's simulator %s, generating on a serving engine with CUDA graphs (%+.2f s over the "
      "generate calls, each on its own)",
      format_seconds(e.simulation.iteration_time_s).c_str(), e.generation_delta_s);
  // Only where the engine broadcasts (generation apart from training).
  if (e.sync_s > 0 || e.sync_delta_s != 0)
    out += line("  weight broadcast %s in place of reallocation %+.2f s", format_seconds(e.sync_s).c_str(),
                e.sync_delta_s);
  if (e.zero3_delta_s > 0)
    out += line("  ZeRO-3 weight all-gathers before each micro-batch's passes +%.2f s", e.zero3_delta_s);
  if (e.turn_swap_s > 0)
    out += line("  training's state offloaded and reloaded as the engines take turns +%.2f s", e.turn_swap_s);
  return out;
}

Json pricing_json(const engines::EngineEstimate& e) {
  Json calls = Json::array();  // the engine's step call by call (with staleness: the steady state's)
  for (const CallResult& c : e.simulation.calls)
    calls.push_back({{"name", c.name}, {"start_s", c.start_s}, {"end_s", c.end_s}, {"realloc_s", c.realloc_s}});
  return {{"calls", calls},
          {"simulated_s", e.simulation.iteration_time_s},
          {"generation_delta_s", e.generation_delta_s},
          {"weight_sync_s", e.sync_s},
          {"weight_sync_delta_s", e.sync_delta_s},
          {"zero3_gather_s", e.zero3_delta_s},
          {"turn_swap_s", e.turn_swap_s}};
}

}  // namespace

EngineReport make_engine_report(const RunConfig& config, const std::string& engine_name,
                                const std::vector<engines::ConfigEntry>& workload) {
  EngineReport r;
  r.config = &config;
  r.engine = engines::make_engine(engine_name);
  r.engine->check_graph(config.graph, config.cluster);
  const HardwareProfile profile = run_profile(config);
  r.profile_name = profile_name(config);
  Simulator simulator(config.graph, config.cluster, profile);
  const engines::Pricing pricing = r.engine->pricing(config.graph);
  engines::EngineEvaluator constrained(simulator, pricing, true);
  engines::EngineEvaluator own(simulator, pricing, false);
  r.search = engines::search_engine_plan(*r.engine, config.graph, config.cluster, constrained, config.plan);
  r.write_input.graph = &config.graph;
  r.write_input.cluster = &config.cluster;
  r.write_input.batch = config.algorithm.batch;
  r.write_input.raw_config = config.raw;
  r.write_input.kl_coef = config.training.train.ppo.kl_coef;
  r.write_input.kl_in_loss = config.training.train.ppo.kl_mode == "loss";
  r.write_input.workload = workload;
  // realign's own plan under the same pricing of generation, moving weights by reallocation. The engine's
  // plan is one of realign's plans too, so realign's own is never slower than it priced that way.
  PlanOptions options = config.plan;
  options.mode = "search";
  const PlannerOutput own_plan = plan_iteration(config.graph, config.cluster, own, options);
  r.unconstrained = own_plan.plan;
  r.unconstrained_time_s = own.estimate(own_plan.plan).iteration_time_s;
  if (!r.search.plan) {
    r.problem = r.engine->display_name() + " has no placement with a strategy for every call on " +
                std::to_string(config.cluster.n_devices()) +
                " devices (the models cannot be sharded that way)";
    return r;
  }
  r.estimate = constrained.estimate(*r.search.plan);
  const engines::EngineEstimate as_own = own.estimate(*r.search.plan);
  if (as_own.fits && as_own.iteration_time_s < r.unconstrained_time_s) {
    r.unconstrained = *r.search.plan;
    r.unconstrained.name = "searched";
    r.unconstrained_time_s = as_own.iteration_time_s;
  }
  r.fits = r.estimate.fits;
  if (!r.fits) {
    r.problem = no_fit_message(r, r.estimate.simulation);
    return r;
  }
  for (size_t i = 0; i < config.graph.mfcs.size(); ++i)
    r.write_input.call_memory_bytes.push_back(
        simulator.call_estimate(int(i), r.search.plan->assignments[i]).memory.total());
  r.write_input.placement = r.search.placement;
  r.engine_config = r.engine->write_config(r.write_input, *r.search.plan);
  return r;
}

EnginePricedPlan price_for_engine(const RunConfig& config, const ExecutionPlan& plan,
                                  const std::string& engine_name, const Json& script_options) {
  EnginePricedPlan r;
  r.engine = engines::make_engine(engine_name);
  r.engine->check_graph(config.graph, config.cluster);
  auto running = engines::placements_running(*r.engine, config.graph, config.cluster, plan, script_options);
  if (running.empty())
    throw Error("--plan", r.engine->display_name() + " cannot run this plan: " +
                              engines::can_run(*r.engine, config.graph, config.cluster, plan, nullptr,
                                               script_options));
  Simulator simulator(config.graph, config.cluster, run_profile(config));
  engines::EngineEvaluator evaluator(simulator, r.engine->pricing(config.graph), true);
  for (engines::Placement& p : running) {
    Json options = p.options;
    options.update(script_options);
    evaluator.set_placement_options(options);
    r.placements.push_back({std::move(p), evaluator.estimate(plan)});
  }
  // What fits first, then the fastest.
  std::stable_sort(r.placements.begin(), r.placements.end(), [](const auto& a, const auto& b) {
    if (a.estimate.fits != b.estimate.fits) return a.estimate.fits;
    return a.estimate.iteration_time_s < b.estimate.iteration_time_s;
  });
  return r;
}

std::string format_engine_pricing(const EnginePricedPlan& r) {
  std::string out;
  for (const auto& [placement, estimate] : r.placements) {
    out += line("as %s runs it (%s): %s per iteration%s", r.engine->display_name().c_str(),
                placement.name.c_str(), format_seconds(estimate.iteration_time_s).c_str(),
                estimate.fits ? "" : " (does not fit in memory)");
    out += pricing_breakdown(estimate);
    if (!estimate.fits && !estimate.simulation.oom_report.empty())
      out += "  " + estimate.simulation.oom_report +
             (std::any_of(estimate.device_saving_bytes.begin(), estimate.device_saving_bytes.end(),
                          [](double b) { return b > 0; })
                  ? " (before the engine's ZeRO savings)\n"
                  : "\n");
  }
  return out;
}

Json engine_pricing_json(const EnginePricedPlan& r) {
  Json each = Json::array();
  for (const auto& [placement, estimate] : r.placements)
    each.push_back({{"placement", placement.name},
                    {"iteration_time_s", estimate.iteration_time_s},
                    {"fits", estimate.fits},
                    {"pricing", pricing_json(estimate)}});
  // The fastest placement's fields at the top, every placement that runs the plan under "placements".
  Json j = each.at(0);
  j["engine"] = r.engine->name();
  j["release"] = r.engine->release().to_json();
  j["placements"] = each;
  return j;
}

std::string format_engine_report(const EngineReport& r) {
  const RunConfig& c = *r.config;
  const DataflowGraph& g = c.graph;
  std::string out;
  out += line("%s plan for %s on %d x %d %s (%d GPUs); profile: %s", r.engine->display_name().c_str(),
              to_string(g.algorithm).c_str(), c.cluster.n_nodes, c.cluster.devices_per_node,
              c.cluster.device.name.c_str(), c.cluster.n_devices(), r.profile_name.c_str());
  out += line("written for %s", r.engine->release().describe(r.engine->display_name()).c_str());
  out += line("searched %d placements the engine can run (%lld steps, %s)", r.search.placements,
              (long long)r.search.steps, format_seconds(r.search.seconds).c_str());
  if (!r.search.plan || !r.fits) {
    out += line("\n%s", r.problem.c_str());
    out += line("realign's own layout: %s per iteration", format_seconds(r.unconstrained_time_s).c_str());
    return out;
  }
  const ExecutionPlan& plan = *r.search.plan;
  out += line("placement: %s", r.search.placement.name.c_str());
  for (const auto& d : r.engine->describe(g, plan)) out += line("  %s", d.c_str());
  out += "\n";
  // A plan with a mixture-of-experts model shows each call's expert-parallel degree too.
  bool moe = false;
  for (const ModelRole& m : g.models) moe |= m.spec.is_moe();
  out += line("%-14s %-7s %3s %3s %3s %4s%s %-5s %9s %9s %10s", "call", "mesh", "dp", "tp", "pp", "mb",
              moe ? "  ep" : "", "opt", "start", "end", "peak mem");
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const MfcAssignment& a = plan.assignments[i];
    const CallResult& cr = r.estimate.simulation.calls[i];
    // The call's peak after the engine's ZeRO sharding (at most: the least any of its devices saves).
    double saving = 1e300;
    for (int d = a.mesh.first; d < a.mesh.end(); ++d)
      saving = std::min(saving, r.estimate.device_saving_bytes[size_t(d)]);
    const std::string opt = std::string(a.strategy.zero1 ? "z1" : "") +
                            (a.strategy.zero1 && a.strategy.recompute ? "," : "") +
                            (a.strategy.recompute ? "rc" : "");
    char ep[16] = "";  // a column only for mixture-of-experts models
    if (moe) std::snprintf(ep, sizeof ep, " %3d", a.strategy.ep);
    out +=
        line("%-14s %-7s %3d %3d %3d %4d%s %-5s %9s %9s %10s", g.mfcs[i].name.c_str(),
             to_string(a.mesh).c_str(), a.strategy.dp, a.strategy.tp, a.strategy.pp, a.strategy.micro_batches,
             ep, opt.empty() ? "-" : opt.c_str(), format_seconds(cr.start_s).c_str(),
             format_seconds(cr.end_s).c_str(), format_bytes(cr.peak_mem_bytes - saving).c_str());
  }
  out += "\n";
  out += line("estimated time per iteration: %s", format_seconds(r.estimate.iteration_time_s).c_str());
  out += pricing_breakdown(r.estimate);
  if (g.staleness > 0)
    out += line(
        "  staleness %lld: the steady state of overlapping iterations, the weight broadcast on the critical "
        "path",
        (long long)g.staleness);
  const double ratio = r.estimate.iteration_time_s / r.unconstrained_time_s;
  out += line("realign's own layout: %s, %.2fx %s, by per-call reallocation",
              format_seconds(r.unconstrained_time_s).c_str(), ratio >= 1 ? ratio : 1 / ratio,
              ratio >= 1 ? "faster" : "slower");
  out += line(
      "realign's own terms (no engine source): per-call and per-step overheads, the training and "
      "inference passes, resharding on the same devices, memory apart from the engines' shares");
  out += line("\n%s config:", r.engine->display_name().c_str());
  for (const auto& e : r.engine_config)
    out += line("  %s = %s", e.key.c_str(),
                e.value.is_string() ? e.value.get<std::string>().c_str() : e.value.dump().c_str());
  return out;
}

Json engine_report_json(const EngineReport& r) {
  Json j;
  j["engine"] = r.engine->name();
  j["release"] = r.engine->release().to_json();  // what the config below is written for
  j["algorithm"] = to_string(r.config->graph.algorithm);
  j["devices"] = r.config->cluster.n_devices();
  j["fits"] = r.search.plan.has_value() && r.fits;
  j["unconstrained_iteration_time_s"] = r.unconstrained_time_s;
  j["unconstrained_plan"] = to_json(r.unconstrained);
  if (!r.search.plan || !r.fits) {
    j["problem"] = r.problem;
    return j;
  }
  j["iteration_time_s"] = r.estimate.iteration_time_s;
  j["placement"] = r.search.placement.name;
  j["roles"] = r.engine->describe(r.config->graph, *r.search.plan);
  Json config = Json::object();
  for (const auto& e : r.engine_config) config[e.key] = e.value;
  j["engine_config"] = config;
  const engines::Pricing pricing = r.engine->pricing(r.config->graph);
  j["pricing_sources"] = {{"generation", pricing.cuda_graph_source},
                          {"weight_sync", pricing.weight_sync_source}};
  if (!pricing.host_resident.empty()) j["pricing_sources"]["host_resident"] = pricing.host_resident_source;
  if (!pricing.micro_batch_size_from.empty())
    j["pricing_sources"]["micro_batch_size"] = pricing.micro_batch_size_source;
  j["realign_own_terms"] = {
      "training and inference passes",         "per-call and per-step overheads",
      "resharding on the same devices",        "optimizer step",
      "memory apart from the engines' shares", "staleness: realign's steady-state simulation"};
  j["pricing"] = pricing_json(r.estimate);
  j["plan"] = to_json(*r.search.plan);
  return j;
}

std::vector<std::string> write_engine_files(const EngineReport& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (const auto& f : r.engine->launch_files(r.write_input, *r.search.plan)) {
    const std::string path = (std::filesystem::path(dir) / f.name).string();
    std::ofstream(path) << f.text;
    if (f.executable) ::chmod(path.c_str(), 0755);
    paths.push_back(path);
  }
  const std::string plan_path = (std::filesystem::path(dir) / "plan.json").string();
  save_plan_file(*r.search.plan, plan_path);
  paths.push_back(plan_path);
  return paths;
}

}  // namespace realign::apps
