// bench/ppo_iteration: seconds per PPO iteration on 4 local worker processes for every preset and the
// searched plan, next to the simulator's estimate for each (through `realign validate --json`, which runs
// each plan with `realign train`). Presets are formed from what the runtime executes (generation
// unpipelined); one that cannot be is listed.
//   bench_ppo_iteration [CONFIG] [STEPS] [ROUNDS] [key=value ...]
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "apps/run_config.h"
#include "core/host.h"
#include "core/json.h"
#include "search/presets.h"
#include "search/simulator_evaluator.h"

int main(int argc, char** argv) {
  using namespace realign;
  const std::string config_file =
      argc > 1 ? argv[1] : std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string steps = argc > 2 ? argv[2] : "12";
  const std::string rounds = argc > 3 ? argv[3] : "3";
  std::vector<std::string> overrides = {"cluster.devices_per_node=4", "batch.prompts=32", "train.threads=1"};
  for (int i = 4; i < argc; ++i) overrides.push_back(argv[i]);
  std::string joined;
  for (const auto& o : overrides) joined += " " + o;
  std::printf(
      "bench/ppo_iteration: machine %s, %ld cores online\nsettings: %s%s, %s RL steps per plan (the "
      "first not measured) in each of %s rounds over the plans, median step time; fp32, Gloo, one local "
      "process per device\n\n",
      cpu_model_name().c_str(), sysconf(_SC_NPROCESSORS_ONLN), config_file.c_str(), joined.c_str(),
      steps.c_str(), rounds.c_str());

  const apps::RunConfig config = apps::load_run_config(config_file, overrides);
  Simulator simulator(config.graph, config.cluster, default_profile(config.cluster.device));
  SimulatorEvaluator evaluator(simulator);
  for (const std::string& name : preset_names())
    if (!make_preset(name, config.graph, config.cluster, evaluator, true))
      std::printf("%-14s cannot be formed on this cluster with what the runtime executes\n", name.c_str());
  const std::string cmd = std::string(REALIGN_BINARY) + " validate " + config_file + joined +
                          " --plans 5 --steps " + steps + " --rounds " + rounds +
                          " --out /tmp/bench_ppo_iteration --json 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string text;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe.get())) text.append(buffer, n);
  const Json report = Json::parse(text);
  std::printf("\n%-14s %14s %14s %8s\n", "plan", "measured s/it", "estimated s/it", "error");
  for (const Json& p : report["plans"])
    std::printf("%-14s %14.3f %14.4f %7.0f%%\n", p["name"].get<std::string>().c_str(),
                p["measured_s"].get<double>(), p["estimated_s"].get<double>(),
                100 * p["error"].get<double>());
  std::printf("\nmedian absolute error %.0f%%, Kendall tau %.2f (profile: %s)\n",
              100 * report["median_abs_error"].get<double>(), report["kendall_tau"].get<double>(),
              config.profile_path.empty() ? "the device's defaults" : config.profile_path.c_str());
  return 0;
}
