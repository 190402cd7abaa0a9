#include "cost/timeline_svg.h"

#include <gtest/gtest.h>

#include "core/svg_bounds.h"

namespace realign {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

Timeline sample() {
  Timeline t;
  t.n_devices = 4;
  t.events = {{"actor_gen", "call", 0, 4, 0.0, 2.0, 0},
              {"ref_inf", "realloc", 0, 2, 2.0, 2.5, 1e9},
              {"ref_inf", "call", 0, 2, 2.5, 3.0, 0},
              {"reward<x>", "call", 2, 2, 2.0, 3.5, 0}};
  return t;
}

TEST(TimelineSvg, RowsBarsLegendAndAxis) {
  const std::string svg = timeline_svg(sample(), "PPO");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(count(svg, ">device " + std::to_string(d) + "<"), 1u) << d;
  EXPECT_EQ(count(svg, "<title>"), 4u);  // one bar per event
  EXPECT_EQ(count(svg, "url(#hatch)"), 1u);
  EXPECT_NE(svg.find("reward&lt;x&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(svg.find("reward<x>"), std::string::npos);
  // Three calls, three colours in the legend; the same colour for ref_inf's realloc and call.
  EXPECT_EQ(count(svg, "#4e79a7"), 2u);  // actor_gen: bar + legend
  EXPECT_EQ(count(svg, "#f28e2b"), 3u);  // ref_inf: realloc + call + legend
  EXPECT_EQ(count(svg, "#e15759"), 2u);
  for (const char* tick : {">0 s<", ">0.5 s<", ">3 s<", ">3.5 s<"})  // 0.5 s steps over 3.5 s
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(svg.find(">4 s<"), std::string::npos);
}

TEST(TimelineSvg, ComparisonDrawsBothOnOneScale) {
  Timeline measured = sample();
  for (auto& e : measured.events) e.end_s *= 2;
  const std::string svg = timeline_comparison_svg(sample(), measured);
  EXPECT_NE(svg.find(">estimated<"), std::string::npos);
  EXPECT_NE(svg.find(">measured<"), std::string::npos);
  EXPECT_EQ(count(svg, ">device 0<"), 2u);
  EXPECT_EQ(count(svg, "<title>"), 8u);
  EXPECT_NE(svg.find(">7 s<"), std::string::npos);  // the longer (measured) span sets the axis
}

// Issue 28: with PPO's six calls the legend ran off the right edge. It wraps into rows inside the picture,
// and no label covers another.
TEST(TimelineSvg, LegendAndLabelsStayInsideThePicture) {
  Timeline t;
  t.n_devices = 4;
  double at = 0;
  for (const char* call :
       {"actor_gen", "ref_inf", "actor_inf", "critic_inf", "actor_train", "critic_train"}) {
    t.events.push_back({call, "realloc", 0, 4, at, at + 0.01, 1e6});
    t.events.push_back({call, "call", 0, 4, at + 0.01, at + 0.04, 0});
    at += 0.04;
  }
  t.events.push_back({"iteration", "host", 0, 4, at, at + 0.005, 0});
  const std::string svg = timeline_svg(t, "PPO on 4 CPU workers");
  EXPECT_EQ(testing::labels_outside(svg), std::vector<std::string>{});
  EXPECT_EQ(testing::overlapping_labels(svg), std::vector<std::string>{});
  // The ticks of a 0.245 s iteration read in milliseconds.
  for (const char* tick : {">0 ms<", ">50 ms<", ">200 ms<"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  // The host's own work is grey, in its bar and its legend entry, and takes no call's colour.
  EXPECT_EQ(count(svg, "#bbbbbb"), 2u);
  EXPECT_EQ(count(svg, "#b07aa1"), 0u);  // the seventh colour

  // A device label of a large cluster widens the margin instead of leaving the picture.
  Timeline wide;
  wide.n_devices = 128;
  wide.events = {{"actor_gen", "call", 0, 128, 0.0, 2.0, 0}};
  EXPECT_EQ(testing::labels_outside(timeline_comparison_svg(wide, wide)), std::vector<std::string>{});
}

}  // namespace
}  // namespace realign
