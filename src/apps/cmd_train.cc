// `realign train CONFIG [key=value ...] [--resume RUN_DIR] [--out RUN_DIR]`: plans, then trains on local
// worker processes (one per cluster device, the binary re-executed through comm::launch_local) or, under
// torchrun / srun (RANK and WORLD_SIZE set), as one worker of the job.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "apps/commands.h"
#include "apps/plan_report.h"
#include "apps/run_summary.h"
#include "comm/launcher.h"
#include "comm/world.h"
#include "core/atomic_file.h"
#include "core/config_file.h"
#include "core/log.h"
#include "core/torch_compat.h"
#include "plan/execution_plan.h"
#include "profile/host_probe.h"
#include "runtime/call_layouts.h"
#include "runtime/device_placement.h"
#include "runtime/json_broadcast.h"
#include "search/candidates.h"
#include "train/metrics_log.h"
#include "train/run_dir.h"
#include "train/thread_budget.h"
#include "train/trainer.h"

namespace realign::apps {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string config;
  std::vector<std::string> overrides;
  std::string resume, out;
  bool no_progress = false;
  bool no_summary = false;
  int preset_steps = 8;
  double host_probe_s = -1;  // a host probe measured already (validate's); negative: time it here
};

// The host probe the plan carries its CPU profile by (profile/host_probe.h): the one given, else timed here
// (0.4 s), which validate's runs of many plans on one machine need not repeat.
double host_probe_s(const Args& args, const RunConfig& config) {
  return args.host_probe_s >= 0 ? args.host_probe_s : profile::host_probe_s_for(config.cluster);
}

// models.<role> given as a directory (or its config.json) holds weights to start from.
std::map<std::string, std::string> model_dirs(const Json& raw) {
  std::map<std::string, std::string> dirs;
  if (!raw.contains("models") || !raw["models"].is_object()) return dirs;
  for (const auto& [role, v] : raw["models"].items()) {
    if (!v.is_string()) continue;
    fs::path p = v.get<std::string>();
    if (fs::is_directory(p))
      dirs[role] = p.string();
    else if (fs::is_regular_file(p) && p.filename() == "config.json")
      dirs[role] = p.parent_path().string();
  }
  return dirs;
}

// The directories above by role, for the trainer (rank 0 sends them to the others by name).
std::map<Role, std::string> by_role(const std::map<std::string, std::string>& dirs) {
  std::map<Role, std::string> out;
  for (const auto& [name, dir] : dirs) out[role_from_string(name, "models." + name)] = dir;
  return out;
}

void print_result(const train::TrainResult& r) {
  std::printf("run directory: %s\n", r.run_dir.c_str());
  std::printf("steps %lld..%lld in %.1f s\n", (long long)r.first_step, (long long)r.last_step, r.seconds);
  if (r.eval_before >= 0) std::printf("held-out accuracy before: %.3f\n", r.eval_before);
  if (r.eval_before_rl >= 0) std::printf("held-out accuracy before RL: %.3f\n", r.eval_before_rl);
  if (r.eval_after >= 0) std::printf("held-out accuracy after:  %.3f\n", r.eval_after);
  if (r.reward_first != 0 || r.reward_last != 0)
    std::printf("RL reward (sampled): first step %.3f, last step %.3f\n", r.reward_first, r.reward_last);
}

// The config file and overrides of a command line: with --resume, the run directory's config.yaml, and a
// first positional token with '=' is an override.
std::pair<std::string, std::vector<std::string>> config_source(const Args& args) {
  std::vector<std::string> overrides = args.overrides;
  std::string config_file = args.config;
  if (!args.resume.empty()) {
    if (!config_file.empty() && config_file.find('=') != std::string::npos)
      overrides.insert(overrides.begin(), config_file);
    config_file = train::open_run_dir(args.resume).config_file();
  } else if (config_file.empty()) {
    throw Error("config", "a config file is required (or --resume RUN_DIR)");
  }
  return {config_file, overrides};
}

std::string run_dir_of(const Args& args, const std::string& config_file) {
  if (!args.resume.empty()) return args.resume;
  if (!args.out.empty()) return args.out;
  return train::default_run_dir("runs", fs::path(config_file).stem().string());
}

// This rank's device and precision, decided here once per rank (runtime/device_placement.h); throws Error
// naming train.device when it cannot be had.
runtime::DevicePlacement rank_placement(const RunConfig& config, int local_rank, int local_ranks) {
  return runtime::place_rank(config.cluster.device, config.training.train.device, config.training.train.dtype,
                             torch_compat::cuda_device_count(), local_rank, local_ranks,
                             torch_compat::kVersion);
}

// Says, once per node, where its ranks run when that is not the CPU the config names, and what a GPU run
// does not do yet. Silent on the CPU path.
void report_placement(const runtime::DevicePlacement& p, int local_rank) {
  if (local_rank != 0) return;
  if (!p.note.empty()) {
    REALIGN_LOG(kWarn) << p.note;
  }
  if (p.cuda) {
    REALIGN_LOG(kWarn)
        << "ranks run on " << runtime::describe(p)
        << "; not done on GPUs yet: NCCL groups (ranks talk over Gloo through host memory); decode steps "
           "replay CUDA graphs only for a model of one stage and tp 1 without experts (model/decode_graph.h), "
           "the others launch each step's kernels";
  }
}

train::TrainerInput trainer_input(const Args& args, const RunConfig& config, const std::string& run_dir,
                                  int local_rank = 0, int local_ranks = 1) {
  train::TrainerInput input;
  input.device = rank_placement(config, local_rank, local_ranks);
  report_placement(*input.device, local_rank);
  input.algorithm = config.algorithm;
  input.sections = config.training;
  input.model_dirs = by_role(model_dirs(config.raw));
  input.raw_config = config.raw;
  input.run_dir = run_dir;
  input.resume = !args.resume.empty();
  input.progress = !args.no_progress;
  return input;
}

// The config to plan with: search only what the runtime executes. load_run_config already sets this for a CPU
// cluster (runtime_runs), so `realign plan` gives the same plans; a training run keeps to it on any device.
RunConfig for_runtime(RunConfig config) {
  config.plan.candidates.runtime_limits = true;
  if (config.algorithm.partial_rollout)
    throw Error("train.partial_rollout", "realign's runtime does not interrupt and resume samples: set it to "
                                         "false to train (realign plan prices it for the engines that do)");
  // Generation as the runtime runs it.
  if (config.algorithm.batching != Batching::kStatic) {
    config.algorithm.batching = Batching::kStatic;
    config.graph = build_graph(config.algorithm);
  }
  return config;
}

// Plans the run and, for a fresh run, makes its directory with the plan. Refuses a plan the runtime cannot
// execute (a preset or a plan file) before any worker starts. The report refers to `config`.
PlanReport plan_run(const RunConfig& config, const std::string& run_dir, bool resume) {
  PlanReport report = make_plan_report(config, "");
  if (config.cluster.n_devices() > 1)
    for (const auto& a : report.planner.plan.assignments)
      if (std::string why = runtime_limit_problem(config.graph, a); !why.empty())
        throw Error("plan.mode",
                    config.plan.mode + ": " + why + " (plan.mode=search finds a plan the runtime executes)");
  if (!resume) {
    train::create_run_dir(run_dir);  // only once the plan is known to run: no empty run directories
    write_text_file(run_dir + "/plan.json", to_json(report.planner.plan).dump(2) + "\n");
    write_text_file(run_dir + "/timeline_estimated.json", to_json(report.simulation.timeline).dump(2) + "\n");
  }
  return report;
}

// One rank of a multi-process job (started by our launcher, or by torchrun / srun). Rank 0 resolves what
// every rank must agree on (the merged config, the run directory that identifies the run, the plan, the
// starting weights' directories, whether it resumes) and hands it to the others over the process group: their
// hosts need no filesystem shared with rank 0's, and they may be given their own --out, or none; they write
// no run files. Under torchrun rank 0 also plans (our launcher already did). On resume rank 0 alone reads the
// run directory; the trainer hands the checkpoint to the other ranks (train/trainer_checkpoint.cc).
int run_distributed(const Args& args, bool plans) {
  return comm::run_worker([&](comm::World& world) {
    Json shared;
    if (world.rank() == 0) {
      const auto [config_file, overrides] = config_source(args);
      RunConfig config = load_run_config(config_file, overrides);
      const std::string run_dir = run_dir_of(args, config_file);
      if (plans) {
        config.host_probe_s = host_probe_s(args, config);
        plan_run(for_runtime(config), run_dir, !args.resume.empty());
      }
      const std::string plan_file = run_dir + "/plan.json";
      shared = Json{{"config", config.raw},
                    {"run_dir", run_dir},
                    {"plan", load_config_file(plan_file)},
                    {"model_dirs", model_dirs(config.raw)},
                    {"resume", !args.resume.empty()}};
    }
    shared = runtime::broadcast_json(*world.global(), shared, 0);
    const RunConfig config = run_config_from_json(shared["config"]);
    if (world.size() != config.cluster.n_devices())
      throw Error("cluster", "describes " + std::to_string(config.cluster.n_devices()) +
                                 " devices but the job has " + std::to_string(world.size()) +
                                 " ranks (WORLD_SIZE)");
    train::TrainerInput input = trainer_input(args, config, shared["run_dir"].get<std::string>(),
                                              world.local_rank(), train::local_workers_from_env(1));
    input.model_dirs = by_role(shared["model_dirs"].get<std::map<std::string, std::string>>());
    input.resume = shared["resume"].get<bool>();  // rank 0's command decides, whatever the others were given
    const std::string plan_source =
        world.rank() == 0 ? input.run_dir + "/plan.json" : "plan.json (from rank 0)";
    ExecutionPlan plan = plan_from_json(shared["plan"], plan_source);
    validate_plan(config.graph, config.cluster, plan, plan_source);
    input.layouts = runtime::call_layouts(config.graph, plan);
    const train::TrainResult r = train::run_training(input, world);
    if (world.rank() == 0 && !args.no_summary) print_result(r);
  });
}

// After a local run: the plan, and its measured seconds per iteration beside the estimate; for a searched
// plan also those of the co-located preset, measured in a short side run (the same config, RL only).
// `report` is the plan the run was launched with.
void print_summary(const Args& args, const std::string& config_file,
                   const std::vector<std::string>& overrides, const std::string& run_dir,
                   const PlanReport& report) {
  const RunConfig& config = *report.config;
  std::vector<PlanMeasurement> rows;
  rows.push_back({config.plan.mode == "search" ? "searched plan" : config.plan.mode + " plan",
                  report.simulation.iteration_time_s, report.simulation.realloc_bytes,
                  measure_iterations(train::read_metrics(run_dir + "/metrics.jsonl"))});
  const bool compare = config.plan.mode == "search" && args.preset_steps > 0 &&
                       !report.planner.presets.empty() && report.planner.presets[0].plan &&
                       report.preset_simulations[0].fits;
  if (compare) {
    const std::string side = run_dir + "/preset-co-located";
    comm::LaunchOptions o;
    o.nprocs = config.cluster.n_devices();
    o.env = {{"REALIGN_LOCAL_WORKER", "1"}};
    o.argv = {comm::current_executable(), "train", config_file};
    for (const std::string& ov : overrides) o.argv.push_back(ov);
    for (const std::string ov : {"plan.mode=co-located", "train.sft_stage.steps=0",
                                 "train.checkpoint_every=0", "train.eval_every=0", "train.eval_prompts=1"})
      o.argv.push_back(ov);
    o.argv.push_back("train.steps=" + std::to_string(args.preset_steps + 1));
    for (const char* flag : {"--no-progress", "--no-summary", "--out"}) o.argv.push_back(flag);
    o.argv.push_back(side);
    train::create_run_dir(side);
    // The launcher's report already holds the co-located preset (presets[0]), as its estimate does.
    write_text_file(side + "/plan.json", to_json(*report.planner.presets[0].plan).dump(2) + "\n");
    std::fprintf(stderr, "measuring %d RL steps of the co-located preset in %s ...\n", args.preset_steps,
                 side.c_str());
    const comm::LaunchResult r = comm::launch_local(o);
    if (r.exit_code == 0)
      rows.push_back({"co-located preset", report.preset_simulations[0].iteration_time_s,
                      report.preset_simulations[0].realloc_bytes,
                      measure_iterations(train::read_metrics(side + "/metrics.jsonl"))});
    else
      std::fprintf(stderr, "the co-located preset's side run failed: %s\n", r.failure.c_str());
  }
  std::printf("%s", format_run_summary(report, rows).c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "train", "Train with RLHF (PPO, GRPO, ReMax, DPO, SFT, RM) on local workers or under torchrun");
  auto args = std::make_shared<Args>();
  sub->add_option("config", args->config,
                  "Config file, e.g. examples/addition_ppo.yaml (with --resume: optional)");
  sub->add_option("overrides", args->overrides, "key=value overrides, e.g. train.steps=20 train.seed=2");
  sub->add_option("--resume", args->resume, "Continue the run in this directory from its latest checkpoint");
  sub->add_option("--out", args->out, "The run directory (default: runs/<config name>-<time>)");
  sub->add_flag("--no-progress", args->no_progress, "No progress bar on stderr");
  sub->add_flag("--no-summary", args->no_summary, "Print no summary at the end");
  sub->add_option("--host-probe-s", args->host_probe_s,
                  "The host probe's seconds measured already on this machine (realign validate passes its "
                  "own), instead of timing it again")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--preset-steps", args->preset_steps,
                  "After a local multi-worker run with a searched plan, measure this many RL steps of the "
                  "co-located preset to compare with (0: none)");
  sub->footer(
      "Sections beyond the planner's: train (steps, seed, optim, critic_optim, ppo, sampling, dpo, "
      "sft_stage,\n"
      "reward_model_stage, checkpoint_every, eval_prompts, eval_every, threads, dtype, device), data (task: "
      "addition "
      "|\n"
      "files; min_digits, max_digits, seed; prompts, sft, preferences JSONL), reward (kind: verifier | model "
      "|\n"
      "command; partial_credit, command, timeout_s). The cluster's device count is the number of "
      "data-parallel\n"
      "workers. Each call runs in its plan's layout (any mesh of the cluster, any dp x tp x pp).");
  on_run(sub, [args] {
    if (args->preset_steps < 0 || args->preset_steps > 1000)
      throw Error("--preset-steps", std::to_string(args->preset_steps) + " is not between 0 and 1000");
    // A worker is a rank started by our launcher (which planned and made the run directory) or by torchrun /
    // srun (where rank 0 does both).
    if (std::getenv("RANK") && std::getenv("WORLD_SIZE"))
      return run_distributed(*args, std::getenv("REALIGN_LOCAL_WORKER") == nullptr);
    const auto [config_file, overrides] = config_source(*args);
    RunConfig config = load_run_config(config_file, overrides);
    config.host_probe_s = host_probe_s(*args, config);
    const std::string run_dir = run_dir_of(*args, config_file);
    const RunConfig planned = for_runtime(config);
    const PlanReport report = plan_run(planned, run_dir, !args->resume.empty());
    const int n = config.cluster.n_devices();
    rank_placement(config, 0, n);  // a device that cannot be had is refused before any worker starts
    if (n == 1) {
      const train::TrainResult r =
          train::run_training(trainer_input(*args, config, run_dir), comm::single_rank_group());
      if (!args->no_summary) print_result(r);
      return 0;
    }
    // Local data parallelism: one worker per device, each re-running this command as rank r.
    comm::LaunchOptions o;
    o.nprocs = n;
    o.env = {{"REALIGN_LOCAL_WORKER", "1"}};
    o.argv = {comm::current_executable(), "train"};
    if (args->resume.empty()) o.argv.push_back(config_file);
    for (const std::string& ov : overrides) o.argv.push_back(ov);
    if (args->resume.empty()) {
      o.argv.push_back("--out");
      o.argv.push_back(run_dir);
    } else {
      o.argv.push_back("--resume");
      o.argv.push_back(run_dir);
    }
    if (args->no_progress) o.argv.push_back("--no-progress");
    if (args->no_summary) o.argv.push_back("--no-summary");
    comm::LaunchResult r = comm::launch_local(o);
    if (r.exit_code != 0) throw Error("train", r.failure);
    if (!args->no_summary && args->resume.empty())
      print_summary(*args, config_file, overrides, run_dir, report);
    return 0;
  });
}

}  // namespace realign::apps
