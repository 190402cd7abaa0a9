// bench/engine_plans: the best plan each engine can run (`realign plan --engine`) on the shipped GPU
// examples: its placement, estimated time per iteration beside realign's own plan under the same pricing, and
// how long the engine's constrained search took. Prints the machine and settings; estimated, not measured.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/engine_report.h"
#include "core/error.h"
#include "core/host.h"
#include "core/units.h"

int main(int argc, char** argv) {
  using namespace realign;
  if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
    std::fprintf(stderr, "usage: bench_engine_plans [SOURCE_DIR [TIME_BUDGET_S]]\n");
    return 1;
  }
  const std::string root = argc > 1 ? argv[1] : REALIGN_SOURCE_DIR;
  const std::string budget = argc > 2 ? argv[2] : "2";
  std::printf("bench/engine_plans: machine %s, %ld cores online; search is single-threaded\n",
              cpu_model_name().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf(
      "settings: plan.seed=1, plan.time_budget_s=%s for the engine's search and again for realign's own, "
      "default max_steps, profiles/h100-sxm.json; estimated, not measured\n\n",
      budget.c_str());
  struct Case {
    std::string name, file;
    std::vector<std::string> overrides;
  };
  const std::vector<Case> cases = {
      {"ppo 7B+7B, 16 H100", "examples/ppo_llama2_7b_16xh100.yaml", {}},
      {"ppo 7B, verifier, 16 H100", "examples/ppo_llama2_7b_16xh100.yaml", {"reward.kind=verifier"}},
      {"ppo 4x70B, 128 H100", "examples/ppo_llama2_70b_128xh100.yaml", {}},
      {"grpo qwen3-30b-a3b, 32 H100", "examples/grpo_qwen3_30b_a3b_32xh100.yaml", {}},
      {"grpo qwen2.5-7b, 8 H100",
       "examples/grpo_qwen3_30b_a3b_32xh100.yaml",
       {"models.actor=qwen2.5-7b", "cluster.nodes=1"}},
  };
  std::printf("%-28s %-9s %-34s %11s %11s %7s %8s %9s\n", "case", "engine", "placement", "s/iteration",
              "realign own", "ratio", "search", "steps");
  for (const Case& c : cases) {
    std::vector<std::string> overrides = c.overrides;
    overrides.push_back("plan.time_budget_s=" + budget);
    const apps::RunConfig config = apps::load_run_config(root + "/" + c.file, overrides);
    bool first = true;
    for (const std::string& engine : engines::engine_names()) {
      const char* name = first ? c.name.c_str() : "";
      first = false;
      try {
        const apps::EngineReport r = apps::make_engine_report(config, engine);
        if (!r.search.plan || !r.fits) {
          std::printf("%-28s %-9s %-34s %11s %11s %7s %8s %9lld\n", name, engine.c_str(), "no plan fits", "-",
                      format_seconds(r.unconstrained_time_s).c_str(), "-",
                      format_seconds(r.search.seconds).c_str(), (long long)r.search.steps);
          continue;
        }
        std::printf("%-28s %-9s %-34s %11s %11s %6.2fx %8s %9lld\n", name, engine.c_str(),
                    r.search.placement.name.c_str(), format_seconds(r.estimate.iteration_time_s).c_str(),
                    format_seconds(r.unconstrained_time_s).c_str(),
                    r.estimate.iteration_time_s / r.unconstrained_time_s,
                    format_seconds(r.search.seconds).c_str(), (long long)r.search.steps);
      } catch (const Error& e) {
        std::printf("%-28s %-9s refused: %s\n", name, engine.c_str(), e.what());
      }
    }
  }
  std::printf(
      "\nratio = the engine's plan / realign's own plan (above 1: realign's per-call reallocation is "
      "faster; below 1: the engine runs what realign's runtime cannot, e.g. FSDP's weight sharding)\n");
  return 0;
}
