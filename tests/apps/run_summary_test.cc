#include "apps/run_summary.h"

#include <gtest/gtest.h>

namespace realign::apps {
namespace {

TEST(RunSummary, MeasuresRlStepsAfterTheFirstByTheirMedian) {
  std::vector<Json> metrics = {
      {{"step", 1}, {"stage", "sft"}, {"time/step_s", 9.0}},
      {{"step", 2}, {"stage", "rl"}, {"time/step_s", 5.0}, {"realloc/bytes", 100.0}},  // warm-up: left out
      {{"step", 3}, {"stage", "rl"}, {"time/step_s", 0.3}, {"realloc/bytes", 10.0}},
      {{"step", 4}, {"stage", "rl"}, {"time/step_s", 0.1}, {"realloc/bytes", 20.0}},
      {{"step", 5}, {"stage", "rl"}, {"time/step_s", 0.2}, {"realloc/bytes", 30.0}},
  };
  const MeasuredIterations m = measure_iterations(metrics);
  EXPECT_EQ(m.steps, 3);
  EXPECT_DOUBLE_EQ(m.seconds, 0.2);
  EXPECT_DOUBLE_EQ(m.realloc_bytes, 20.0);
  EXPECT_EQ(measure_iterations({metrics[0], metrics[1]}).steps, 0);  // no RL step beyond the warm-up
}

}  // namespace
}  // namespace realign::apps
