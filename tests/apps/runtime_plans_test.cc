// Every plan `realign plan` prints or saves for a config realign's runtime runs (the shipped CPU examples)
// keeps to the runtime's limits, whatever the mode: `realign train plan.mode=file` then runs it. GPU configs,
// which the runtime does not run, are still planned as their engines run (the co-located preset recomputes).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "apps/plan_report.h"

namespace realign::apps {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> cpu_examples() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(std::string(REALIGN_SOURCE_DIR) + "/examples"))
    if (e.path().filename().string().rfind("addition_", 0) == 0) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every call's assignment the runtime executes; the first problem as a failure naming `where`.
void expect_runtime_runs(const DataflowGraph& graph, const ExecutionPlan& plan, const std::string& where) {
  for (const auto& a : plan.assignments) EXPECT_EQ(runtime_limit_problem(graph, a), "") << where;
}

TEST(RuntimePlans, EveryModeOnTheCpuExamplesGivesPlansTheRuntimeRuns) {
  const auto examples = cpu_examples();
  ASSERT_GE(examples.size(), 5u) << "the shipped examples/addition_*.yaml";
  for (const std::string& example : examples)
    for (const char* devices : {"1", "4"}) {  // the example as shipped (1 or 4 workers), and on 4 workers
      const std::string where =
          fs::path(example).filename().string() + " cluster.devices_per_node=" + std::string(devices);
      auto config_for = [&](const std::string& mode) {
        return load_run_config(example, {"cluster.devices_per_node=" + std::string(devices),
                                         "plan.mode=" + mode, "plan.max_steps=200", "plan.time_budget_s=5"});
      };
      const RunConfig searched = config_for("search");
      ASSERT_TRUE(runtime_runs(searched.cluster)) << where;
      EXPECT_TRUE(searched.plan.candidates.runtime_limits) << where;
      const PlanReport report = make_plan_report(searched, "");
      expect_runtime_runs(searched.graph, report.planner.plan, where + " plan.mode=search");
      // Each preset the table prints beside the plan, and the plan its own mode gives.
      for (const auto& p : report.planner.presets) {
        const std::string mode = where + " plan.mode=" + p.name;
        const RunConfig config = config_for(p.name);
        if (!p.plan) {
          EXPECT_THROW(make_plan_report(config, ""), Error) << mode << ": cannot be formed";
          continue;
        }
        expect_runtime_runs(searched.graph, *p.plan, mode + " (beside the searched plan)");
        const PlanReport own = make_plan_report(config, "");
        expect_runtime_runs(config.graph, own.planner.plan, mode);
      }
    }
}

// The rule is the cluster's device: a GPU config keeps the fixed-layout engines' recomputation in its
// co-located preset, as ReaL's figures count it.
TEST(RuntimePlans, GpuConfigsAreNotHeldToTheRuntimesLimits) {
  const RunConfig config = load_run_config(
      std::string(REALIGN_SOURCE_DIR) + "/examples/ppo_llama2_7b_16xh100.yaml", {"plan.mode=co-located"});
  EXPECT_FALSE(runtime_runs(config.cluster));
  EXPECT_FALSE(config.plan.candidates.runtime_limits);
  const PlanReport report = make_plan_report(config, "");
  EXPECT_TRUE(std::any_of(report.planner.plan.assignments.begin(), report.planner.plan.assignments.end(),
                          [](const MfcAssignment& a) { return a.strategy.recompute; }));
}

}  // namespace
}  // namespace realign::apps
