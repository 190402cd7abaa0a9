// `realign validate CONFIG --plans N`: runs N plans (the presets, then random valid ones) for a few RL steps
// each on local workers (`realign train` with the plan as a file), `--rounds R` times round-robin, and sets
// each plan's measured iteration time and per-call times (medians over the pooled steps) beside the
// simulator's estimate: per-plan and per-call error, each call's estimate split by coefficient group, the
// median absolute error and Kendall's tau over plans. `--calibrate` fits the profile to the measurements;
// `--svg` draws one plan's estimated and measured timelines together.
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "apps/commands.h"
#include "apps/estimate_accuracy.h"
#include "comm/launcher.h"
#include "core/atomic_file.h"
#include "core/config_file.h"
#include "core/host.h"
#include "core/read_file.h"
#include "cost/calibration.h"
#include "cost/timeline_svg.h"
#include "profile/host_probe.h"
#include "train/run_dir.h"

namespace realign::apps {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string config;
  std::vector<std::string> overrides;
  int plans = 10;
  // The first step is a warm-up. Over 2 cores, a plan's median of 3 measured steps moved 18% between rounds,
  // of 11 steps 6%.
  int steps = 12;
  int rounds = 3;  // each plan runs this many times, round-robin over the plans
  uint64_t seed = 1;
  std::string svg, out = "validate", calibrate;
  bool json = false;
  bool rescore = false;  // reuse the runs already in --out: re-estimate and re-calibrate without running
};

struct Measured {
  double iteration_s = 0;
  std::vector<double> rounds_s;         // the median step of each round
  std::map<std::string, double> calls;  // call -> seconds, median over the measured steps
};

// The run directories of a plan: round 1 in <out>/<name>, round r > 1 in <out>/<name>.run<r>.
std::string run_dir_of(const Args& args, const std::string& plan, int round) {
  return args.out + "/" + plan + (round == 1 ? "" : ".run" + std::to_string(round));
}

// Runs `realign train` on the plan into `run_dir`, with this machine's host probe (`host_probe_s`, 0 on a
// GPU cluster) measured once for all the runs.
void run_plan(const Args& args, const std::string& plan_file, const std::string& run_dir, double host_probe_s) {
  fs::remove_all(run_dir);
  std::ostringstream cmd;
  cmd << comm::current_executable() << " train " << args.config;
  for (const std::string& o : args.overrides) cmd << " '" << o << "'";
  cmd << " plan.mode=file plan.file=" << plan_file << " train.steps=" << args.steps
      << " train.sft_stage.steps=0 train.checkpoint_every=0 train.eval_prompts=0 --no-progress";
  if (host_probe_s > 0) cmd << " --host-probe-s " << Json(host_probe_s).dump();
  cmd << " --out " << run_dir << " > " << run_dir << ".log 2>&1";
  if (std::system(cmd.str().c_str()) != 0)
    throw Error("validate", "the run of " + plan_file + " failed; see " + run_dir + ".log");
}

// The median step and call times of a plan's RL steps after the first (warm-up) of each run, pooled over
// its rounds (every round found, for --rescore).
Measured read_measurement(const Args& args, const std::string& plan) {
  std::vector<double> steps;
  std::map<std::string, std::vector<double>> calls;
  Measured m;
  for (int round = 1;; ++round) {
    const std::string run_dir = run_dir_of(args, plan, round);
    if (!fs::exists(run_dir + "/metrics.jsonl")) {
      if (round > 1) break;
      throw Error("--rescore",
                  run_dir + " holds no run; run validate with the same --out, --plans and --seed first");
    }
    std::istringstream lines(read_file(run_dir + "/metrics.jsonl"));
    std::vector<double> round_steps;
    for (std::string line; std::getline(lines, line);) {
      const Json j = Json::parse(line);
      if (j.value("stage", "") != "rl" || j["step"].get<int64_t>() < 2) continue;
      round_steps.push_back(j["time/step_s"].get<double>());
      for (const auto& [key, v] : j.items())
        if (key.rfind("time/", 0) == 0 && key != "time/step_s")
          calls[key.substr(5, key.size() - 7)].push_back(v.get<double>());
    }
    if (round_steps.empty()) continue;
    m.rounds_s.push_back(median(round_steps));
    steps.insert(steps.end(), round_steps.begin(), round_steps.end());
  }
  if (steps.empty()) throw Error("validate.steps", "needs at least 2 RL steps (the first is a warm-up)");
  m.iteration_s = median(steps);
  for (const auto& [call, v] : calls) m.calls[call] = median(v);
  return m;
}

// The plans of an earlier validate run in args.out, in the order it ran them (--rescore).
std::vector<PlanToMeasure> measured_plans(const Args& args, const RunConfig& config) {
  const std::string list = args.out + "/plans.txt";
  if (!fs::exists(list)) throw Error("--rescore", list + " not found: run validate with this --out first");
  std::vector<PlanToMeasure> plans;
  std::istringstream names(read_file(list));
  for (std::string name; std::getline(names, name);) {
    if (name.empty()) continue;
    ExecutionPlan plan = load_plan_file(args.out + "/" + name + ".plan.json");
    validate_plan(config.graph, config.cluster, plan, args.out + "/" + name + ".plan.json");
    plans.push_back({name, plan});
  }
  return plans;
}

// The host probe of the machine the runs in args.out were measured on (cost/host_scaling.h): timed now and
// kept beside the runs, or, with --rescore, the one kept, so that scoring the same runs again gives the same
// estimates (a probe timed again moves by a few percent).
double runs_host_probe_s(const Args& args, const RunConfig& config) {
  const std::string kept = args.out + "/host_probe_s.json";
  if (args.rescore && fs::exists(kept)) {
    const Json j = load_config_file(kept);  // a damaged file is refused naming it
    ObjectReader r(j, kept);
    const double probe_s = r.get_double("host_probe_s");
    r.finish();
    if (!(probe_s >= 0)) throw Error(kept + ".host_probe_s", "must be a number of seconds >= 0");
    return probe_s;
  }
  const double probe_s = profile::host_probe_s_for(config.cluster);
  if (!args.rescore) {
    fs::create_directories(args.out);
    write_text_file(kept, Json{{"host_probe_s", probe_s}}.dump() + "\n");
  }
  return probe_s;
}

// Fits the profile to the measured call times, writes it, and re-scores the same plans with it (in sample).
Json calibrate_profile(const Args& args, const RunConfig& config, const HardwareProfile& profile,
                       const std::vector<PlanToMeasure>& plans,
                       const std::vector<CallMeasurement>& call_times, const std::vector<double>& measured) {
  const std::string evidence = "fitted to " + std::to_string(call_times.size()) + " call times of " +
                               std::to_string(plans.size()) + " plans measured by `realign validate` on " +
                               cpu_model_name() + " (" + std::to_string(config.cluster.n_devices()) +
                               " local workers)";
  std::vector<ExecutionPlan> plan_list;
  for (const PlanToMeasure& p : plans) plan_list.push_back(p.plan);
  const Calibration c = calibrate_to_iterations(config.graph, config.cluster, profile, call_times, plan_list,
                                                measured, evidence);
  HardwareProfile fitted = c.profile;
  // The machine the fit describes, so that a run on another machine carries it there (cost/host_scaling.h).
  if (config.host_probe_s > 0)
    fitted.host_probe_s = {config.host_probe_s, "measured by `realign validate` on " + cpu_model_name() +
                                                    " with the runs this profile was fitted to"};
  write_text_file(args.calibrate, to_json(fitted).dump(2) + "\n");
  Simulator calibrated(config.graph, config.cluster, fitted);
  std::vector<double> estimated, errors;
  for (size_t i = 0; i < plans.size(); ++i) {
    estimated.push_back(calibrated.run(plans[i].plan).iteration_time_s);
    errors.push_back(relative_error(estimated.back(), measured[i]));
  }
  Json scales = Json::object();
  for (const GroupScale& g : c.scales)
    if (g.fitted) scales[g.group] = g.scale;
  Json out{{"profile", args.calibrate},
           {"scales", scales},
           {"iteration_overhead_s", fitted.iteration_overhead_s.value},
           {"call_median_error_before", c.median_error_before},
           {"call_median_error_after", c.median_error_after},
           {"median_abs_error", median(errors)},
           {"kendall_tau", kendall_tau(estimated, measured)}};
  if (c.idle_worker_load >= 0) out["idle_worker_load"] = c.idle_worker_load;
  out["notes"] = c.notes;
  return out;
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "validate", "Run several plans on local workers and compare measured with estimated times");
  auto args = std::make_shared<Args>();
  sub->add_option("config", args->config, "Run config (an RL algorithm on local workers)")->required();
  sub->add_option("overrides", args->overrides, "key=value overrides");
  sub->add_option("--plans", args->plans, "How many plans to run (presets first, then random valid ones)")
      ->capture_default_str();
  sub->add_option("--steps", args->steps, "RL steps per plan (the first is not measured)")
      ->capture_default_str();
  sub->add_option(
         "--rounds", args->rounds,
         "Run every plan this many times, round-robin over the plans, and pool their steps: a drift of "
         "the machine's speed spreads over all plans instead of favouring some")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of the random plans")->capture_default_str();
  sub->add_option("--out", args->out, "Directory for the runs")->capture_default_str();
  sub->add_option("--svg", args->svg, "Draw the first plan's estimated and measured timelines to this SVG");
  sub->add_option("--calibrate", args->calibrate,
                  "Fit the profile's coefficient groups to the measured call times and write the calibrated "
                  "profile here (load it with profile=FILE; validate again with another --seed to check it)");
  sub->add_flag("--rescore", args->rescore,
                "Score the runs already in --out again (another profile, --calibrate) without running them");
  sub->add_flag("--json", args->json, "One JSON object on stdout: median_abs_error, kendall_tau, plans");
  on_run(sub, [args] {
    if (args->plans < 2) throw Error("--plans", "needs at least 2 plans to rank");
    if (args->steps < 2) throw Error("--steps", "needs at least 2 steps (the first is a warm-up)");
    if (args->rounds < 1) throw Error("--rounds", "needs at least 1 round");
    RunConfig config = load_run_config(args->config, args->overrides);
    config.host_probe_s = runs_host_probe_s(*args, config);
    const HardwareProfile profile = run_profile(config);
    Simulator simulator(config.graph, config.cluster, profile);
    const std::vector<PlanToMeasure> plans =
        args->rescore ? measured_plans(*args, config)
                      : plans_to_measure(config, simulator, args->plans, args->seed);
    if (plans.size() < 2) throw Error("--plans", "fewer than 2 runnable plans fit this cluster");
    fs::create_directories(args->out);
    if (!args->rescore) {
      std::string names;
      for (const PlanToMeasure& p : plans) names += p.name + "\n";
      write_text_file(args->out + "/plans.txt", names);
    }
    if (!args->rescore) {
      for (const PlanToMeasure& p : plans) save_plan_file(p.plan, args->out + "/" + p.name + ".plan.json");
      for (int round = 1; round <= args->rounds; ++round)
        for (size_t i = 0; i < plans.size(); ++i) {
          std::fprintf(stderr, "[%zu/%zu] %s%s ...\n", i + 1, plans.size(), plans[i].name.c_str(),
                       args->rounds > 1 ? (" (round " + std::to_string(round) + ")").c_str() : "");
          run_plan(*args, args->out + "/" + plans[i].name + ".plan.json",
                   run_dir_of(*args, plans[i].name, round), config.host_probe_s);
        }
    }
    Json report = Json::array();
    std::vector<double> estimated, measured, errors, call_errors;
    std::vector<std::vector<double>> by_round;  // [round][plan], the rounds every plan has
    std::vector<CallMeasurement> call_times;
    const std::vector<std::string> groups = calibration_groups();
    for (size_t i = 0; i < plans.size(); ++i) {
      const PlanToMeasure& p = plans[i];
      const SimulationResult sim = simulator.run(p.plan);
      const std::string run_dir = run_dir_of(*args, p.name, 1);
      const Measured m = read_measurement(*args, p.name);
      estimated.push_back(sim.iteration_time_s);
      measured.push_back(m.iteration_s);
      by_round.resize(i == 0 ? m.rounds_s.size() : std::min(by_round.size(), m.rounds_s.size()));
      for (size_t r = 0; r < by_round.size(); ++r) by_round[r].push_back(m.rounds_s[r]);
      errors.push_back(relative_error(sim.iteration_time_s, m.iteration_s));
      Json calls = Json::array();
      for (size_t k = 0; k < sim.calls.size(); ++k) {
        const CallResult& c = sim.calls[k];
        Json entry{{"name", c.name}, {"estimated_s", c.end_s - c.start_s}, {"busy_ranks", c.busy_ranks}};
        if (m.calls.count(c.name)) {
          entry["measured_s"] = m.calls.at(c.name);
          entry["error"] = relative_error(c.end_s - c.start_s, m.calls.at(c.name));
          call_errors.push_back(entry["error"].get<double>());
          call_times.push_back(
              {int(k), p.plan.assignments[k], m.calls.at(c.name), m.iteration_s, c.busy_ranks});
          // The estimate alone on its mesh, split by coefficient group: what --calibrate scales.
          const std::vector<double> parts =
              call_time_parts(config.graph, config.cluster, profile, {call_times.back()})[0];
          Json by_group = Json::object();
          for (size_t g = 0; g < groups.size(); ++g) by_group[groups[g]] = parts[g];
          entry["parts_s"] = by_group;
        }
        calls.push_back(entry);
      }
      report.push_back(Json{{"name", p.name},
                            {"estimated_s", sim.iteration_time_s},
                            {"measured_s", m.iteration_s},
                            {"error", errors.back()},
                            {"calls", calls},
                            {"plan", to_json(p.plan)}});
      if (i == 0 && !args->svg.empty()) {
        const Timeline real = timeline_from_json(load_config_file(run_dir + "/timeline.json"), run_dir);
        write_text_file(args->svg, timeline_comparison_svg(sim.timeline, real, p.name));
      }
    }
    const double mae = median(errors), tau = kendall_tau(estimated, measured);
    const double call_mae = median(call_errors);
    const RoundAgreement rounds = round_agreement(by_round, estimated);
    Json calibration;
    if (!args->calibrate.empty())
      calibration = calibrate_profile(*args, config, profile, plans, call_times, measured);
    if (args->json) {
      Json out{{"median_abs_error", mae},
               {"call_median_abs_error", call_mae},
               {"kendall_tau", tau},
               {"plans", report}};
      if (rounds.pairs > 0)
        out["rounds"] = {{"kendall_tau_median", rounds.median},
                         {"kendall_tau_min", rounds.min},
                         {"kendall_tau_max", rounds.max},
                         {"pairs_of_rounds", rounds.pairs},
                         {"plan_pairs_every_round_orders_alike", rounds.resolved_pairs},
                         {"of_which_the_estimate_orders_alike", rounds.estimate_agrees}};
      if (!calibration.is_null()) out["calibration"] = calibration;
      std::printf("%s\n", out.dump().c_str());
      return 0;
    }
    std::printf("%-16s %12s %12s %8s\n", "plan", "estimated", "measured", "error");
    for (const Json& r : report) {
      std::printf("%-16s %11.3fs %11.3fs %7.1f%%\n", r["name"].get<std::string>().c_str(),
                  r["estimated_s"].get<double>(), r["measured_s"].get<double>(),
                  100 * r["error"].get<double>());
      for (const Json& c : r["calls"]) {
        if (!c.contains("measured_s")) {
          std::printf("  %-14s %11.4fs %12s\n", c["name"].get<std::string>().c_str(),
                      c["estimated_s"].get<double>(), "-");
          continue;
        }
        std::printf("  %-14s %11.4fs %11.4fs %7.1f%%\n", c["name"].get<std::string>().c_str(),
                    c["estimated_s"].get<double>(), c["measured_s"].get<double>(),
                    100 * c["error"].get<double>());
      }
    }
    std::printf("\nmedian absolute error %.1f%%, Kendall tau %.2f over %zu plans (profile: %s)\n", 100 * mae,
                tau, plans.size(), profile_name(config).c_str());
    std::printf(
        "per call: median absolute error %.1f%% over %zu calls (each call's median time in its plan)\n",
        100 * call_mae, call_errors.size());
    if (rounds.pairs > 0)
      std::printf(
          "the measurement's own repeatability: Kendall tau between two rounds' rankings %.2f (median; "
          "%.2f to %.2f over %d pairs of rounds); of the %d pairs of plans every round orders alike, the "
          "estimate orders %d alike\n",
          rounds.median, rounds.min, rounds.max, rounds.pairs, rounds.resolved_pairs, rounds.estimate_agrees);
    if (!calibration.is_null()) {
      std::printf("\ncalibration (written to %s): time factor per coefficient group\n",
                  args->calibrate.c_str());
      for (const auto& [group, scale] : calibration["scales"].items())
        std::printf("  %-16s x%.3g\n", group.c_str(), scale.get<double>());
      if (calibration.contains("idle_worker_load"))
        std::printf("  idle worker load %.2g of a core\n", calibration["idle_worker_load"].get<double>());
      std::printf("  iteration overhead %.1f ms\n", 1e3 * calibration["iteration_overhead_s"].get<double>());
      for (const Json& note : calibration["notes"])
        std::printf("  warning: %s\n", note.get<std::string>().c_str());
      // The error before calibration is the per-call line above; --json keeps the fit's own figure for it.
      std::printf(
          "calibrated, in sample: per call median error %.1f%%; per plan median error %.1f%%, Kendall tau "
          "%.2f\n",
          100 * calibration["call_median_error_after"].get<double>(),
          100 * calibration["median_abs_error"].get<double>(), calibration["kendall_tau"].get<double>());
    }
    return 0;
  });
}

}  // namespace realign::apps
