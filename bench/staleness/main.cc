// bench/staleness: synchronous against asynchronous RL as the planner estimates it. For each shipped GPU
// example, the searched plan's estimated time per iteration at train.staleness 0, 1 and 2 (each its own full
// search with the same seed and budget) and the speedup over staleness 0. Prints the machine and settings.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/plan_report.h"
#include "core/host.h"
#include "core/units.h"

int main(int argc, char** argv) {
  using namespace realign;
  if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
    std::fprintf(stderr, "usage: bench_staleness [SOURCE_DIR [TIME_BUDGET_S]]\n");
    return 1;
  }
  const std::string root = argc > 1 ? argv[1] : REALIGN_SOURCE_DIR;
  const std::string budget = argc > 2 ? argv[2] : "10";
  std::printf("bench/staleness: machine %s, %ld cores online; search is single-threaded\n",
              cpu_model_name().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf(
      "settings: plan.mode=search, plan.seed=1, plan.time_budget_s=%s per search, default max_steps, the "
      "device's shipped profile (profiles/); estimated (simulated steady state), not measured\n\n",
      budget.c_str());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ppo 7B+7B, 16 H100", "examples/ppo_llama2_7b_16xh100.yaml"},
      {"ppo 4x70B, 128 H100", "examples/ppo_llama2_70b_128xh100.yaml"},
      {"grpo qwen2.5-7b, 8 H100", "examples/grpo_qwen2.5_7b_8xh100.yaml"},
  };
  std::printf("%-24s %9s %11s %9s %9s %8s %12s\n", "case", "staleness", "s/iteration", "speedup", "search",
              "steps", "evaluations");
  for (const auto& [name, file] : cases) {
    double sync = 0;
    for (int n = 0; n <= 2; ++n) {
      const apps::RunConfig config = apps::load_run_config(
          root + "/" + file, {"train.staleness=" + std::to_string(n), "plan.time_budget_s=" + budget});
      const apps::PlanReport report = apps::make_plan_report(config, "");
      const double t = report.simulation.iteration_time_s;
      if (n == 0) sync = t;
      char speedup[32] = "-";
      if (report.simulation.fits && sync > 0) std::snprintf(speedup, sizeof speedup, "%.3fx", sync / t);
      std::printf("%-24s %9d %11s %9s %9s %8lld %12lld\n", n == 0 ? name.c_str() : "", n,
                  report.simulation.fits ? format_seconds(t).c_str() : "no fit", speedup,
                  format_seconds(report.planner.planning_seconds).c_str(),
                  report.planner.search ? (long long)report.planner.search->steps : 0LL,
                  report.planner.search ? (long long)report.planner.search->evaluations : 0LL);
    }
  }
  std::printf(
      "\nspeedup = estimated time per iteration at staleness 0 / at this staleness (the steady state of "
      "overlapping iterations, src/cost/simulator.h)\n");
  return 0;
}
