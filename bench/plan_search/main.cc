// bench/plan_search: search wall time and estimated iteration time of the searched plan against every preset,
// for the shipped examples and a 1,024-GPU cluster. Prints the machine and the settings with the figures.
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/plan_report.h"
#include "core/host.h"
#include "core/units.h"

namespace {

struct Case {
  std::string name;
  std::string config;
  std::vector<std::string> overrides;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace realign;
  if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
    std::fprintf(stderr, "usage: bench_plan_search [SOURCE_DIR [TIME_BUDGET_S]]\n");
    return 1;
  }
  const std::string root = argc > 1 ? argv[1] : REALIGN_SOURCE_DIR;
  const std::string budget = argc > 2 ? argv[2] : "10";
  std::printf("bench/plan_search: machine %s, %ld cores online; search is single-threaded\n",
              cpu_model_name().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf(
      "settings: plan.mode=search, plan.seed=1, plan.time_budget_s=%s, default max_steps, the device's "
      "shipped profile (profiles/)\n\n",
      budget.c_str());
  const std::vector<Case> cases = {
      {"ppo 7B+7B, 16 H100", root + "/examples/ppo_llama2_7b_16xh100.yaml", {}},
      {"grpo qwen2.5-7b, 8 H100", root + "/examples/grpo_qwen2.5_7b_8xh100.yaml", {}},
      // Response lengths spread under a cap (lognormal, mean 768): generation priced stretch by stretch.
      {"ppo 7B+7B, lengths", root + "/examples/ppo_llama2_7b_16xh100.yaml", {"batch.gen_len_max=3072"}},
      {"ppo 4x70B, 128 H100", root + "/examples/ppo_llama2_70b_128xh100.yaml", {}},
      {"ppo 4x70B, 1024 H100",
       root + "/examples/ppo_llama2_70b_128xh100.yaml",
       {"cluster.nodes=128", "batch.prompts=4096"}},
  };
  std::printf("%-24s %10s %12s %12s %12s %12s %12s %9s\n", "case", "search", "searched", "co-located",
              "heuristic", "interleave", "disaggr.", "vs best");
  for (const auto& c : cases) {
    std::vector<std::string> overrides = c.overrides;
    overrides.push_back("plan.time_budget_s=" + budget);
    const apps::RunConfig config = apps::load_run_config(c.config, overrides);
    const apps::PlanReport report = apps::make_plan_report(config, "");
    double best_preset = 0;
    std::string cells;
    for (size_t i = 0; i < report.planner.presets.size(); ++i) {
      const bool ok = report.planner.presets[i].plan && report.preset_simulations[i].fits;
      const double t = report.preset_simulations[i].iteration_time_s;
      char cell[32];
      std::snprintf(cell, sizeof cell, " %12s", ok ? format_seconds(t).c_str() : "no fit");
      cells += cell;
      if (ok && (best_preset == 0 || t < best_preset)) best_preset = t;
    }
    const double searched = report.simulation.iteration_time_s;
    std::printf("%-24s %10s %12s%s %8.3fx\n", c.name.c_str(),
                format_seconds(report.planner.planning_seconds).c_str(),
                report.simulation.fits ? format_seconds(searched).c_str() : "no fit", cells.c_str(),
                best_preset > 0 && report.simulation.fits ? best_preset / searched : 0.0);
    if (const auto& s = report.planner.search)
      std::printf(
          "%-24s   (%lld steps in %s, %.0f steps/s; the best plan found at step %lld; %lld evaluations)\n",
          "", (long long)s->steps, format_seconds(s->seconds).c_str(),
          s->seconds > 0 ? double(s->steps) / s->seconds : 0.0, (long long)s->best_step,
          (long long)s->evaluations);
  }
  std::printf(
      "\n'vs best' = best fitting preset's estimated time / searched plan's estimated time (>= 1 is "
      "better); 'search' includes forming the presets and candidates, 'steps in' is the chain alone, which "
      "stops at plan.max_steps (200,000) or the budget, whichever comes first\n");
  return 0;
}
