// `realign simulate CONFIG --plan PLAN.json [--engine NAME]`: estimate a given plan the way `plan` does, draw
// its timeline, and with --engine price it as that engine runs it (a user's current layout, before launch).
#include <cstdio>
#include <fstream>
#include <optional>

#include "apps/commands.h"
#include "apps/engine_report.h"
#include "apps/plan_report.h"
#include "cost/explain.h"
#include "cost/hardware_profile.h"
#include "cost/timeline_svg.h"
#include "engines/engine.h"
#include "engines/pricing.h"

namespace realign::apps {

void add_simulate_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("simulate", "Estimate one iteration of a given plan (time, memory, timeline)");
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    std::string plan;
    std::string svg;
    std::string engine;
    bool json = false;
    bool explain = false;
  };
  auto args = std::make_shared<Args>();
  sub->add_option("config", args->config, "Config file (YAML or JSON)")->required();
  sub->add_option("overrides", args->overrides, "key=value overrides");
  sub->add_option("--plan", args->plan, "Plan file (JSON, as `realign plan --out` writes it)")->required();
  sub->add_option("--svg", args->svg, "Write the estimated timeline as an SVG Gantt chart");
  sub->add_option("--engine", args->engine,
                  "Also price the plan as this engine runs it: verl | openrlhf | areal | nemo-rl "
                  "(docs/engines.md); an error names the engine's rule the plan breaks");
  sub->add_flag("--json", args->json, "Print one JSON object (with the timeline) instead of the table");
  sub->add_flag("--explain", args->explain,
                "List every cost-model coefficient used, with its value and source");
  on_run(sub, [args] {
    const RunConfig config = load_run_config(args->config, args->overrides);
    const PlanReport report = make_plan_report(config, args->plan);
    std::optional<EnginePricedPlan> priced;
    if (!args->engine.empty()) priced = price_for_engine(config, report.planner.plan, args->engine);
    if (!args->svg.empty()) {
      std::ofstream out(args->svg);
      out << timeline_svg(report.simulation.timeline, to_string(config.graph.algorithm) + ": " + args->plan);
      if (!out) throw Error(args->svg, "cannot write the SVG file");
    }
    if (args->json) {
      Json j = plan_report_json(report);
      j["timeline"] = to_json(report.simulation.timeline);
      if (priced) j["as_engine_runs_it"] = engine_pricing_json(*priced);
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%s", format_plan_table(report).c_str());
      if (priced) std::printf("\n%s", format_engine_pricing(*priced).c_str());
      if (!args->svg.empty()) std::printf("\ntimeline written to %s\n", args->svg.c_str());
    }
    if (args->explain) {
      const HardwareProfile profile = run_profile(config);
      const std::vector<ExplainLine> own = explain(profile);
      std::printf("\ncost model coefficients (%s):\n%s", profile_name(config).c_str(),
                  format_explain(own).c_str());
      if (!args->engine.empty()) {
        // What the engine's pricing puts in place of the profile's: for its generation, for its passes.
        const engines::Pricing pricing = engines::make_engine(args->engine)->pricing(config.graph);
        auto changed = [&](const HardwareProfile& p) {
          std::vector<ExplainLine> out;
          const std::vector<ExplainLine> lines = explain(p);
          for (size_t i = 0; i < lines.size(); ++i)
            if (lines[i].value != own[i].value || lines[i].source != own[i].source) out.push_back(lines[i]);
          return out;
        };
        std::printf("\nas %s generates, in place of the above:\n%s", args->engine.c_str(),
                    format_explain(changed(engines::generation_profile(profile, pricing))).c_str());
        const auto passes = engines::pass_profile(profile, pricing);
        std::printf("\nas %s runs its training and inference passes, in place of the above:\n%s",
                    args->engine.c_str(),
                    passes ? format_explain(changed(*passes)).c_str() : "  (the profile's own)\n");
      }
    }
    // With --engine, whether the engine's best placement fits (its sharding may fit what realign's does not).
    const bool fits = priced ? priced->placements.front().estimate.fits : report.simulation.fits;
    return fits ? 0 : 2;
  });
}

}  // namespace realign::apps
