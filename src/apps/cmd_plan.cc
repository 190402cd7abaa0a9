// `realign plan CONFIG [key=value ...]`: search an execution plan and compare it with every preset; with
// --frontier, plan the workload at several cluster sizes.
#include <cstdio>
#include <fstream>

#include "apps/commands.h"
#include "apps/engine_report.h"
#include "apps/frontier_report.h"
#include "apps/plan_report.h"

namespace realign::apps {
namespace {

struct Args {
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
  std::string engine;
  bool json = false;
  bool frontier = false;
};

// The plan of one cluster (realign's, or the engine's with --engine), printed and saved as asked; `frontier`:
// the sizes an objective chose it from, added to the JSON.
int report_plan(const RunConfig& config, const Args& args, const FrontierReport* frontier = nullptr) {
  auto with_frontier = [&](Json j) {
    if (frontier) {
      const Json f = frontier_json(*frontier);
      j["objective"] = f["objective"];
      j["frontier"] = f["frontier"];
    }
    return j;
  };
  if (!args.engine.empty()) {
    const EngineReport report = make_engine_report(config, args.engine);
    const bool ok = report.search.plan && report.fits;
    std::vector<std::string> written;
    if (ok && !args.out.empty()) written = write_engine_files(report, args.out);
    if (args.json) {
      std::printf("%s\n", with_frontier(engine_report_json(report)).dump().c_str());
    } else {
      std::printf("%s", format_engine_report(report).c_str());
      for (const auto& p : written) std::printf("wrote %s\n", p.c_str());
    }
    if (!ok && !args.json) std::fprintf(stderr, "error: %s\n", report.problem.c_str());
    return ok ? 0 : 2;
  }
  const PlanReport report = make_plan_report(config, "", /*compare_staleness=*/true);
  if (!args.out.empty()) save_plan_file(report.planner.plan, args.out);
  if (args.json) {
    std::printf("%s\n", with_frontier(plan_report_json(report)).dump().c_str());
  } else {
    std::printf("%s", format_plan_table(report).c_str());
    if (!args.out.empty()) std::printf("\nplan saved to %s\n", args.out.c_str());
  }
  return report.simulation.fits ? 0 : 2;
}

// --frontier, or an objective that trades time for GPU-hours: the frontier (for the objective, over the
// sizes the cluster holds), then the plan of the size the objective picks.
int report_frontier(const RunConfig& config, const Args& args) {
  const FrontierReport frontier = make_frontier_report(config, args.engine, !args.frontier);
  if (args.frontier) {
    if (args.json) {
      Json j = frontier_json(frontier);
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%s", format_frontier(frontier).c_str());
    }
    return frontier.chosen ? 0 : 2;
  }
  if (!frontier.chosen) {
    std::fprintf(stderr, "error: no size up to the cluster's has a plan that fits\n%s",
                 format_frontier(frontier).c_str());
    return 2;
  }
  const int64_t devices = frontier.points[*frontier.chosen].devices;
  if (!args.json)
    std::printf("plan.objective %s picks %lld of the cluster's %d devices\n%s\n",
                to_string(config.plan.objective).c_str(), (long long)devices, config.cluster.n_devices(),
                format_frontier(frontier).c_str());
  RunConfig sized = config;
  sized.cluster = cluster_of_size(config.cluster, devices);
  return report_plan(sized, args, &frontier);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("plan", "Search an execution plan for a config and compare it with the presets");
  auto args = std::make_shared<Args>();
  sub->add_option("config", args->config,
                  "Config file (YAML or JSON), e.g. examples/ppo_llama2_7b_16xh100.yaml")
      ->required();
  sub->add_option("overrides", args->overrides, "key=value overrides, e.g. plan.seed=3 cluster.nodes=4");
  sub->add_option(
      "--out", args->out,
      "Save the chosen plan as JSON (load it with `simulate --plan` or plan.mode=file); with --engine, "
      "a directory for what the engine launches (launch.sh or config.yaml) and plan.json");
  sub->add_option(
      "--engine", args->engine,
      "Plan for an engine's rules and write its config: verl | openrlhf | areal | nemo-rl (docs/engines.md)");
  sub->add_flag("--json", args->json, "Print one JSON object instead of the table");
  sub->add_flag("--frontier", args->frontier,
                "Plan the workload at several cluster sizes (a quarter to four times the config's, or "
                "plan.frontier.nodes / devices): seconds against GPU-hours per iteration, the Pareto set, the "
                "knee and the point plan.objective picks");
  sub->footer(
      "The config's plan section: mode (search | co-located | heuristic | interleaving | disaggregated | "
      "file),\n"
      "file, seed, time_budget_s, max_steps, strategies_per_mesh_size, disjoint (lists of calls kept "
      "apart),\n"
      "objective (time | gpu_hours | {time_within: 1.2}: other than time, the plan may use fewer of the "
      "cluster's devices), frontier ({nodes | devices: [...], knee_gain}).");
  on_run(sub, [args] {
    const RunConfig config = load_run_config(args->config, args->overrides);
    const bool trades = !(config.plan.objective == Objective{});
    return args->frontier || trades ? report_frontier(config, *args) : report_plan(config, *args);
  });
}

}  // namespace realign::apps
