#include "cost/timeline_svg.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(svg.find(">3.00 s<"), std::string::npos);  // an axis tick (0.5 s steps over 3.5 s)
}

TEST(TimelineSvg, ComparisonDrawsBothOnOneScale) {
  Timeline measured = sample();
  for (auto& e : measured.events) e.end_s *= 2;
  const std::string svg = timeline_comparison_svg(sample(), measured);
  EXPECT_NE(svg.find(">estimated<"), std::string::npos);
  EXPECT_NE(svg.find(">measured<"), std::string::npos);
  EXPECT_EQ(count(svg, ">device 0<"), 2u);
  EXPECT_EQ(count(svg, "<title>"), 8u);
  EXPECT_NE(svg.find(">7.00 s<"), std::string::npos);  // the longer (measured) span sets the axis
}

}  // namespace
}  // namespace realign
