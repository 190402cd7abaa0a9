// What `realign plan CONFIG --engine NAME` prints and writes: the best plan the engine can run, in its own
// words, its estimate beside realign's unconstrained plan, its config, and the files a user launches.
#pragma once

#include <optional>
#include <string>

#include "apps/run_config.h"
#include "engines/engine.h"
#include "engines/engine_search.h"

namespace realign::apps {

struct EngineReport {
  const RunConfig* config = nullptr;
  std::unique_ptr<engines::Engine> engine;
  std::string profile_name;
  engines::EngineSearchResult search;
  engines::EngineEstimate estimate;  // of search.plan (when found)
  engines::WriteInput write_input;
  bool fits = false;
  std::string problem;  // when no plan fits: the role, the device and what would fit
  ExecutionPlan unconstrained;
  double unconstrained_time_s = 0;
  std::vector<engines::ConfigEntry> engine_config;  // when fits
};

// A given plan priced as an engine runs it (`realign simulate ... --engine NAME`): each of the engine's
// placements that runs it (several where only a training backend or a ZeRO stage tells them apart) with its
// estimate under the engine's pricing, the fastest first.
struct EnginePricedPlan {
  struct Priced {
    engines::Placement placement;
    engines::EngineEstimate estimate;
  };
  std::unique_ptr<engines::Engine> engine;
  std::vector<Priced> placements;
};

// Throws Error naming --plan when the engine cannot run `plan` (the rule it breaks), and as
// make_engine_report does for an unknown engine or a graph it cannot run. `script_options`: a launch
// script's ReadRun::pricing_options, priced over each placement's options.
EnginePricedPlan price_for_engine(const RunConfig& config, const ExecutionPlan& plan,
                                  const std::string& engine_name,
                                  const Json& script_options = Json::object());
std::string format_engine_pricing(const EnginePricedPlan& priced);
Json engine_pricing_json(const EnginePricedPlan& priced);

// Throws Error for an unknown engine or a graph the engine cannot run.
EngineReport make_engine_report(const RunConfig& config, const std::string& engine_name,
                                const std::vector<engines::ConfigEntry>& workload = {});

std::string format_engine_report(const EngineReport& report);
Json engine_report_json(const EngineReport& report);
// Writes the engine's launch files and the plan (realign's plan.json) under `dir`; returns their paths.
std::vector<std::string> write_engine_files(const EngineReport& report, const std::string& dir);

}  // namespace realign::apps
