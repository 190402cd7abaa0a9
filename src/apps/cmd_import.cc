// `realign import SCRIPT --engine verl|openrlhf|areal|nemo-rl [key=value ...]`: a user's own launch script
// (or AReaL config) for an engine, priced before launch. The script's settings become a realign config (the
// workload) and a plan (the layout it runs); the plan is priced as the engine runs it, and the engine's best
// plan for the same workload is searched beside it, so the user sees what the script costs and what a better
// layout gains, with the files to launch it; --compare adds the other engines' best plans for it.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "apps/commands.h"
#include "apps/engine_report.h"
#include "apps/frontier_report.h"
#include "core/atomic_file.h"
#include "core/config_file.h"
#include "core/read_file.h"
#include "core/units.h"
#include "engines/placements.h"
#include "engines/script_reader.h"
#include "graph/model_spec.h"
#include "plan/cluster.h"

namespace realign::apps {
namespace {

struct Args {
  std::string script, engine, out;
  std::vector<std::string> overrides, env;
  bool json = false, compare = false, frontier = false;
};

// The same workload's best plan on each other engine, priced alike (make_engine_report), or why the engine
// cannot run it.
struct OtherEngine {
  std::string name, display, placement, problem;
  double time_s = 0;
};

std::vector<OtherEngine> other_engines(const RunConfig& config, const std::string& engine) {
  std::vector<OtherEngine> out;
  for (const std::string& name : engines::engine_names()) {
    if (name == engine) continue;
    OtherEngine o{name, engines::make_engine(name)->display_name(), "", "", 0};
    try {
      const EngineReport r = make_engine_report(config, name);
      if (r.search.plan && r.fits)
        o.placement = r.search.placement.name, o.time_s = r.estimate.iteration_time_s;
      else
        o.problem = r.problem;
    } catch (const Error& e) {
      o.problem = e.what();
    }
    out.push_back(o);
  }
  return out;
}

// The realign config the script describes, the command line's overrides applied last. A model path that
// names no known shape is reported against the config key that would name it.
RunConfig imported_config(const Args& args, engines::ReadRun& run) {
  Json raw = run.config;
  auto overridden = [&](const std::string& key) {
    return std::any_of(args.overrides.begin(), args.overrides.end(),
                       [&](const std::string& o) { return o.rfind(key + "=", 0) == 0; });
  };
  if (!raw["cluster"].contains("device") && !overridden("cluster.device")) {
    raw["cluster"]["device"] = "h100-sxm";
    std::string devices;
    for (const std::string& d : builtin_device_names())
      if (d != "h100-sxm" && d.rfind("cpu", 0) != 0) devices += (devices.empty() ? "" : ", ") + d;
    run.notes.push_back(
        "cluster.device: launch scripts do not name the GPU; priced on h100-sxm (pass "
        "cluster.device=NAME, one of " +
        devices + ", or a device spec file for another)");
  }
  if (!overridden("batch.gen_len") && !overridden("batch.gen_len_quantiles") &&
      !overridden("batch.gen_lengths") && raw["batch"].contains("gen_len_max"))
    run.notes.push_back(
        "batch.gen_len: scripts give the response-length cap (" + raw["batch"]["gen_len_max"].dump() +
        "), not the mean; priced with every response that long (an upper bound on generation and no tail): "
        "pass batch.gen_len=MEAN (lognormal under the cap), batch.gen_len_quantiles or "
        "batch.gen_lengths=FILE for the task's lengths");
  apply_overrides(raw, args.overrides);
  // The engine streams generation only asynchronously: made synchronous on the command line, the script's
  // streaming is not the user's to undo as well.
  if (raw.contains("train") && raw["train"].value("partial_rollout", false) &&
      raw["train"].value("staleness", int64_t(0)) == 0 && !overridden("train.partial_rollout")) {
    raw["train"].erase("partial_rollout");
    run.notes.push_back("train.partial_rollout: the script streams generation; at train.staleness 0 generation "
                        "is synchronous and waits for the batch's tail");
  }
  // A model the script names by a path realign cannot read (a hub name of no built-in shape, a directory
  // on the training cluster) is named by the script's key, with the override that gives its shape.
  const auto builtin = builtin_model_names();
  for (const auto& [role, source] : raw["models"].items()) {
    const auto from = run.sources.find("models." + role);
    // {"model": ..., "override_config": ...}: the model named is the one to find.
    const Json& named = source.is_object() && source.contains("model") ? source["model"] : source;
    if (from == run.sources.end() || !named.is_string()) continue;
    const std::string path = named.get<std::string>();
    if (std::find(builtin.begin(), builtin.end(), path) != builtin.end() || std::filesystem::exists(path) ||
        (role == to_string(Role::kRef) && path == kNoReference))
      continue;
    // Both ways to give the shape: the model's config.json where realign looks, or models.<role>=.
    std::string places;
    for (const std::string& place : engines::model_config_places(path))
      places += (places.empty() ? "" : ", ") + place;
    const bool hub_id = places.find("models--") != std::string::npos;
    throw Error(from->second,
                "'" + path + "' is no built-in model shape and no config.json was found for it (" + places +
                    "); " +
                    (hub_id ? "download it (`huggingface-cli download " + path + " config.json`), or "
                            : "copy the model's config.json there, or ") +
                    "pass models." + role +
                    "=<a built-in shape (`realign models` lists them) or the path of its config.json>");
  }
  try {
    return run_config_from_json(raw);
  } catch (const Error& e) {
    // A value the script set, refused by realign's config: named by the script's key.
    const auto from = run.sources.find(e.path());
    if (from == run.sources.end() || overridden(e.path())) throw;
    throw Error(from->second,
                std::string(e.what()).substr(e.path().size() + 2) + " (realign's " + e.path() + ")");
  }
}

// The plan as the engine runs it. A serving engine generates at most the sequences its KV cache holds at
// once: where the whole batch does not fit, the generation runs in the fewest waves that do.
EnginePricedPlan priced_with_waves(const RunConfig& config, ExecutionPlan& plan, const std::string& engine,
                                   const engines::ReadRun& run, std::vector<std::string>& notes) {
  // Of the engine's placements that run the plan, the one the script's switches name.
  auto price = [&](const ExecutionPlan& p) {
    EnginePricedPlan out = price_for_engine(config, p, engine, run.pricing_options);
    std::vector<EnginePricedPlan::Priced> named;
    for (auto& each : out.placements)
      if (engines::has_options(each.placement, run.options)) named.push_back(std::move(each));
    if (!named.empty()) out.placements = std::move(named);
    return out;
  };
  const size_t gen = size_t(config.graph.mfc_index("actor_gen"));
  const int64_t per_rank = config.graph.mfcs[gen].n_seqs / plan.assignments[gen].strategy.dp;
  EnginePricedPlan priced = price(plan);
  if (priced.placements.front().estimate.fits) return priced;
  // The fewest waves that fit; where none does, the most (the smallest cache), so what is left is reported.
  for (int64_t waves = 2; waves <= per_rank; ++waves) {
    if (per_rank % waves != 0) continue;
    ExecutionPlan in_waves = plan;
    in_waves.assignments[gen].strategy.micro_batches = int(waves);
    EnginePricedPlan p = price(in_waves);
    const bool fits = p.placements.front().estimate.fits;
    if (fits || waves == per_rank) {
      plan = in_waves, priced = std::move(p);
      notes.push_back(std::string("actor_gen: the batch's KV cache does not fit at once; priced in ") +
                      std::to_string(waves) + " waves, as vLLM schedules what its cache holds" +
                      (fits ? "" : ", and still does not fit"));
      break;
    }
  }
  return priced;
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "import",
      "Price an engine's launch script (veRL, OpenRLHF, NeMo-RL) or config (AReaL) before launch, "
      "beside the best plan it can run");
  auto args = std::make_shared<Args>();
  sub->add_option("script", args->script,
                  "The engine's launch script (bash: python3 -m ... key=value ... or --flag value ...), or "
                  "AReaL's YAML config")
      ->required();
  sub->add_option("overrides", args->overrides,
                  "key=value overrides of the realign config read from it, e.g. cluster.device=a100-80gb "
                  "models.actor=path/config.json plan.time_budget_s=20");
  sub->add_option("--engine", args->engine,
                  "The engine the script launches: verl | openrlhf | areal | nemo-rl (docs/engines.md)")
      ->required();
  sub->add_option("--env", args->env,
                  "NAME=VALUE: a variable the script reads from its environment (repeat it)")
      ->allow_extra_args(false);
  sub->add_option("--out", args->out,
                  "A directory for the realign config (config.json), the script's plan (script_plan.json) "
                  "and the best plan's launch files");
  sub->add_flag("--json", args->json, "Print one JSON object instead of the report");
  sub->add_flag("--compare", args->compare,
                "Also search the same workload's best plan on each other engine, priced alike");
  sub->add_flag("--frontier", args->frontier,
                "Instead, the workload's frontier under the engine: its best plan at a quarter to four times "
                "the script's GPUs (or plan.frontier), seconds against GPU-hours per iteration");
  on_run(sub, [args] {
    std::map<std::string, std::string> env;
    for (const std::string& e : args->env) {
      const size_t eq = e.find('=');
      if (eq == std::string::npos || eq == 0) throw Error("--env", "'" + e + "': write NAME=VALUE");
      env[e.substr(0, eq)] = e.substr(eq + 1);
    }
    engines::ReadRun run =
        engines::make_engine(args->engine)->read_run(read_file(args->script), args->script, env);
    const RunConfig config = imported_config(*args, run);
    // --frontier, or an objective that trades time for GPU-hours (then over the sizes the script's cluster
    // holds, the objective's pick marked).
    if (args->frontier || !(config.plan.objective == Objective{})) {
      const FrontierReport frontier = make_frontier_report(config, args->engine, !args->frontier);
      if (args->json) {
        Json j = frontier_json(frontier);
        j["script"] = args->script;
        j["config"] = config.raw;
        j["notes"] = run.notes;
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::printf("%s:\n", args->script.c_str());
        for (const std::string& n : run.notes) std::printf("  note: %s\n", n.c_str());
        if (frontier.chosen)
          std::printf("\nplan.objective %s picks %lld of the script's %d GPUs\n",
                      to_string(config.plan.objective).c_str(),
                      (long long)frontier.points[*frontier.chosen].devices, config.cluster.n_devices());
        std::printf("\n%s", format_frontier(frontier).c_str());
      }
      return frontier.chosen ? 0 : 2;
    }
    ExecutionPlan plan = run.plan(config.graph, config.cluster, run.notes);
    // A degree the model cannot take (tp not dividing its heads, pp above its layers), named by the call.
    for (size_t i = 0; i < plan.assignments.size(); ++i) {
      const Mfc& m = config.graph.mfcs[i];
      const MfcAssignment& a = plan.assignments[i];
      // On the engine's serving engine for generation (KV heads replicated under a larger tp).
      if (std::string why = strategy_problem(m, config.graph.model(m.model).spec, config.cluster, a.mesh.size,
                                             a.strategy, true);
          !why.empty())
        throw Error(args->script, "the script runs " + a.mfc + " as " + to_string(a.strategy) + ": " + why);
    }
    validate_plan(config.graph, config.cluster, plan, args->script, true);  // on the engine's serving engine
    const EnginePricedPlan priced = [&] {
      try {
        return priced_with_waves(config, plan, args->engine, run, run.notes);
      } catch (const Error& e) {
        // An engine rule the script's layout breaks: named by the script, not by a --plan it never passed.
        if (e.path() != "--plan") throw;
        throw Error(args->script, "its layout: " + std::string(e.what()).substr(e.path().size() + 2));
      }
    }();
    const EngineReport best = make_engine_report(config, args->engine, run.workload);
    const double script_s = priced.placements.front().estimate.iteration_time_s;
    const bool script_fits = priced.placements.front().estimate.fits;
    const bool best_fits = best.search.plan && best.fits;

    const std::vector<OtherEngine> others =
        args->compare ? other_engines(config, args->engine) : std::vector<OtherEngine>{};

    std::vector<std::string> written;
    if (!args->out.empty()) {
      std::filesystem::create_directories(args->out);
      write_text_file(args->out + "/config.json", config.raw.dump(2) + "\n");
      save_plan_file(plan, args->out + "/script_plan.json");
      written = {args->out + "/config.json", args->out + "/script_plan.json"};
      if (best_fits)
        for (const std::string& f : write_engine_files(best, args->out + "/planned")) written.push_back(f);
    }
    if (args->json) {
      Json j = {{"script", args->script},           {"config", config.raw},
                {"script_plan", to_json(plan)},     {"as_engine_runs_it", engine_pricing_json(priced)},
                {"best", engine_report_json(best)}, {"notes", run.notes}};
      if (script_fits && best_fits) j["speedup"] = script_s / best.estimate.iteration_time_s;
      for (const OtherEngine& o : others)
        j["other_engines"].push_back(
            o.problem.empty()
                ? Json{{"engine", o.name}, {"placement", o.placement}, {"iteration_time_s", o.time_s}}
                : Json{{"engine", o.name}, {"problem", o.problem}});
      std::printf("%s\n", j.dump().c_str());
    } else {
      const BatchShape& b = config.algorithm.batch;
      const Json& actor = config.raw["models"]["actor"];
      std::printf(
          "%s: %s of %s, %lld prompts x %lld samples of %lld + %lld tokens, on %d x %d %s; its layout:\n",
          args->script.c_str(), to_string(config.graph.algorithm).c_str(),
          (actor.is_string() ? actor.get<std::string>() : actor.dump()).c_str(), (long long)b.prompts,
          (long long)b.samples_per_prompt, (long long)b.prompt_len, (long long)b.gen_len,
          config.cluster.n_nodes, config.cluster.devices_per_node, config.cluster.device.name.c_str());
      for (const MfcAssignment& a : plan.assignments)
        std::printf("  %-13s %s\n", a.mfc.c_str(), to_string(a.strategy).c_str());
      for (const std::string& n : run.notes) std::printf("  note: %s\n", n.c_str());
      std::printf("\n%s", format_engine_pricing(priced).c_str());
      std::printf("\nthe best plan %s runs for the same workload:\n%s", priced.engine->display_name().c_str(),
                  format_engine_report(best).c_str());
      const double speedup = best_fits ? script_s / best.estimate.iteration_time_s : 0;
      if (script_fits && speedup >= 1)
        std::printf("\n%.2fx the script's speed (%s per iteration against %s)\n", speedup,
                    format_seconds(best.estimate.iteration_time_s).c_str(), format_seconds(script_s).c_str());
      else if (script_fits && best_fits)
        std::printf(
            "\nthe script's layout is %.2fx as fast as the plan found within plan.time_budget_s (%s "
            "against %s): keep it, or search longer\n",
            1 / speedup, format_seconds(script_s).c_str(),
            format_seconds(best.estimate.iteration_time_s).c_str());
      if (!others.empty()) std::printf("\nthe same workload on the other engines (their best plans):\n");
      const OtherEngine* fastest = nullptr;
      for (const OtherEngine& o : others) {
        std::printf("  %-9s %s\n", o.display.c_str(),
                    (o.problem.empty() ? format_seconds(o.time_s) + " per iteration, " + o.placement
                                       : "cannot: " + o.problem)
                        .c_str());
        if (o.problem.empty() && (!fastest || o.time_s < fastest->time_s)) fastest = &o;
      }
      if (fastest && best_fits && fastest->time_s < best.estimate.iteration_time_s)
        std::printf("  fastest: %s, %.2fx as fast as %s's best plan\n", fastest->display.c_str(),
                    best.estimate.iteration_time_s / fastest->time_s, priced.engine->display_name().c_str());
      for (const std::string& f : written) std::printf("wrote %s\n", f.c_str());
    }
    return script_fits ? 0 : 2;
  });
}

}  // namespace realign::apps
