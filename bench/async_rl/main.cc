// bench/async_rl: synchronous vs asynchronous RL (train.staleness 0 and 1) on local worker processes,
// measured, beside the simulator's estimate of each run's own plan. Each staleness gets its own searched
// plan (the search plans the asynchronous graph), run with `realign train`; the median RL step time (the
// first RL step not counted) is read from the run's metrics and the plan is priced by `realign simulate`.
//   bench_async_rl [CONFIG] [RL_STEPS] [key=value ...]
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "apps/run_summary.h"
#include "core/host.h"
#include "core/json.h"
#include "train/metrics_log.h"

namespace {

std::string run(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string text;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe.get())) text.append(buffer, n);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace realign;
  const std::string config =
      argc > 1 ? argv[1] : std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string steps = argc > 2 ? argv[2] : "24";
  std::string overrides =
      " cluster.devices_per_node=4 train.threads=1 train.sft_stage.steps=4 train.eval_prompts=16"
      " train.checkpoint_every=0 train.steps=" +
      steps;
  for (int i = 3; i < argc; ++i) overrides += " " + std::string(argv[i]);
  std::printf(
      "bench/async_rl: machine %s, %ld cores online\nsettings: %s%s; 4 local worker processes, one intra-op "
      "thread each, fp32, Gloo; median RL step time, the first RL step not measured\n\n",
      cpu_model_name().c_str(), sysconf(_SC_NPROCESSORS_ONLN), config.c_str(), overrides.c_str());
  std::printf("%-10s %14s %14s %8s   %s\n", "staleness", "measured s/it", "estimated s/it", "error", "plan");
  double sync_measured = 0, sync_estimated = 0;
  for (int staleness : {0, 1}) {
    const std::string dir = "/tmp/bench_async_rl_" + std::to_string(staleness);
    run("rm -rf " + dir);
    const std::string args = config + overrides + " train.staleness=" + std::to_string(staleness);
    run(std::string(REALIGN_BINARY) + " train " + args + " --no-progress --no-summary --out " + dir + " > " +
        dir + ".log 2>&1");
    const apps::MeasuredIterations m = apps::measure_iterations(train::read_metrics(dir + "/metrics.jsonl"));
    const Json sim = Json::parse(run(std::string(REALIGN_BINARY) + " simulate " + args + " --plan " + dir +
                                     "/plan.json --json 2>/dev/null"));
    const double estimated = sim["iteration_time_s"].get<double>();
    std::string plan;
    for (const Json& c : sim["mfcs"])
      plan += c["name"].get<std::string>() + "@" + c["mesh"].get<std::string>() + " ";
    std::printf("%-10d %14.4f %14.4f %7.0f%%   %s\n", staleness, m.seconds, estimated,
                100 * (estimated - m.seconds) / m.seconds, plan.c_str());
    if (staleness == 0) {
      sync_measured = m.seconds;
      sync_estimated = estimated;
    } else {
      std::printf("\nstaleness 1 vs synchronous: measured %.2fx, estimated %.2fx as fast\n",
                  sync_measured / m.seconds, sync_estimated / estimated);
    }
  }
  return 0;
}
