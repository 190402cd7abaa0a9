#include "train/curves_svg.h"

#include <gtest/gtest.h>

#include "core/svg_bounds.h"
#include "train/report.h"

namespace realign::train {
namespace {

// A PPO run as the trainer records it: an evaluation at step 0, 60 SFT steps of 10-30 ms, 150 RL iterations
// of 200-300 ms, a KL of 1e-10 to 2.94e-10 (issue 28's clipped label) and evaluations every 25 steps.
std::vector<Json> ppo_run() {
  std::vector<Json> r = {Json{{"step", 0}, {"stage", "sft"}, {"eval/accuracy", 0.05}}};
  for (int s = 1; s <= 210; ++s) {
    Json rec{{"step", s}, {"stage", s <= 60 ? "sft" : "rl"}};
    if (s <= 60) {
      rec["loss/sft"] = 3.0 - s * 0.04;
      rec["time/step_s"] = 0.01 + 0.02 * (s % 7) / 6.0;
    } else {
      rec["reward/mean"] = 0.2 + 0.004 * (s - 60);
      rec["kl/mean"] = 1e-10 + 1.94e-10 * (s - 61) / 149.0;
      rec["time/step_s"] = 0.2 + 0.1 * (s % 5) / 4.0;
    }
    if (s % 25 == 0) rec["eval/accuracy"] = 0.1 + s * 0.003;
    r.push_back(rec);
  }
  return r;
}

TEST(CurvesSvg, SecondsPerStepGetAPanelPerStageOnItsOwnScale) {
  const std::string svg = curves_svg(ppo_run(), report_panels(), "realign run ppo");
  EXPECT_NE(svg.find(">seconds per step, SFT steps<"), std::string::npos);
  EXPECT_NE(svg.find(">seconds per step, RL steps<"), std::string::npos);
  EXPECT_EQ(svg.find(">seconds per step<"), std::string::npos);
  // SFT's 10-30 ms in 5 ms ticks, RL's 200-300 ms in 20 ms ticks: on one scale neither would get its ticks.
  for (const char* tick : {">0.015<", ">0.025<", ">0.22<", ">0.28<"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
}

TEST(CurvesSvg, AxesHaveNiceTicksAndEveryLabelFits) {
  const std::string svg = curves_svg(ppo_run(), report_panels(), "realign run ppo");
  for (const char* tick : {">1e-10<", ">1.5e-10<", ">3e-10<",  // KL: short exponent labels
                           ">0.8<", ">0.6<",                   // reward, 0.2-0.8 extended to its ticks
                           ">50<", ">100<", ">200<"})          // steps
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(realign::testing::labels_outside(svg), std::vector<std::string>{});
  EXPECT_EQ(realign::testing::overlapping_labels(svg), std::vector<std::string>{});
}

TEST(CurvesSvg, AStageChangeInsideAPanelIsMarked) {
  const std::string svg = curves_svg(ppo_run(), {{"eval/accuracy", "held-out accuracy"}}, "run");
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find(">RL<"), std::string::npos);
  // A panel within one stage has no marker.
  const std::string sft = curves_svg(ppo_run(), {{"loss/sft", "SFT loss"}}, "run");
  EXPECT_EQ(sft.find("stroke-dasharray"), std::string::npos);
}

TEST(CurvesSvg, RecordsWithoutStagesAndSinglePoints) {
  const std::string svg = curves_svg({Json{{"step", 3}, {"time/step_s", 0.5}}},
                                     {{"time/step_s", "seconds per step", true}}, "run");
  EXPECT_NE(svg.find(">seconds per step<"), std::string::npos);  // no stages: one panel
  EXPECT_NE(svg.find("<circle"), std::string::npos);
  EXPECT_NE(svg.find(">3<"), std::string::npos);  // the one step, no fractional step ticks
  EXPECT_EQ(svg.find(">3.1<"), std::string::npos);
  EXPECT_EQ(realign::testing::labels_outside(svg), std::vector<std::string>{});
  EXPECT_NE(curves_svg({}, {{"x", "x"}}, "run").find("no metrics recorded"), std::string::npos);
}

}  // namespace
}  // namespace realign::train
