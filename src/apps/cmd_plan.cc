// `realign plan CONFIG [key=value ...]`: search an execution plan and compare it with every preset.
#include <cstdio>
#include <fstream>

#include "apps/commands.h"
#include "apps/engine_report.h"
#include "apps/plan_report.h"

namespace realign::apps {

void add_plan_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("plan", "Search an execution plan for a config and compare it with the presets");
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    std::string out;
    std::string engine;
    bool json = false;
  };
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
  sub->footer(
      "The config's plan section: mode (search | co-located | heuristic | interleaving | disaggregated | "
      "file),\n"
      "file, seed, time_budget_s, max_steps, strategies_per_mesh_size, disjoint (lists of calls kept "
      "apart).");
  on_run(sub, [args] {
    const RunConfig config = load_run_config(args->config, args->overrides);
    if (!args->engine.empty()) {
      const EngineReport report = make_engine_report(config, args->engine);
      const bool ok = report.search.plan && report.fits;
      std::vector<std::string> written;
      if (ok && !args->out.empty()) written = write_engine_files(report, args->out);
      if (args->json) {
        std::printf("%s\n", engine_report_json(report).dump().c_str());
      } else {
        std::printf("%s", format_engine_report(report).c_str());
        for (const auto& p : written) std::printf("wrote %s\n", p.c_str());
      }
      if (!ok && !args->json) std::fprintf(stderr, "error: %s\n", report.problem.c_str());
      return ok ? 0 : 2;
    }
    const PlanReport report = make_plan_report(config, "", /*compare_staleness=*/true);
    if (!args->out.empty()) save_plan_file(report.planner.plan, args->out);
    if (args->json) {
      std::printf("%s\n", plan_report_json(report).dump().c_str());
    } else {
      std::printf("%s", format_plan_table(report).c_str());
      if (!args->out.empty()) std::printf("\nplan saved to %s\n", args->out.c_str());
    }
    return report.simulation.fits ? 0 : 2;
  });
}

}  // namespace realign::apps
