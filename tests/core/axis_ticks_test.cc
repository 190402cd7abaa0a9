#include "core/axis_ticks.h"

#include <gtest/gtest.h>

#include <cmath>

namespace realign {
namespace {

std::vector<std::string> labels(double lo, double hi, int target = 5, bool extend = true,
                                double min_step = 0) {
  return tick_labels(axis_ticks(lo, hi, target, extend, min_step));
}

using L = std::vector<std::string>;

TEST(AxisTicks, StepsAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(axis_ticks(0, 1, 5, true).step, 0.2);
  EXPECT_DOUBLE_EQ(axis_ticks(0, 3.5, 8, false).step, 0.5);
  EXPECT_DOUBLE_EQ(axis_ticks(0, 210, 5, false).step, 50);
  EXPECT_DOUBLE_EQ(axis_ticks(0, 0.0007, 5, true).step, 0.0002);
  EXPECT_DOUBLE_EQ(axis_ticks(-3, 7, 5, true).step, 2);
  for (double span : {0.3, 1.0, 7.0, 13.0, 99.0, 1234.0, 4.4e-9})
    for (int target : {3, 5, 8}) {
      const AxisTicks t = axis_ticks(0, span, target, true);
      const double mantissa = t.step / std::pow(10.0, std::floor(std::log10(t.step) + 1e-9));
      EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 ||
                  std::fabs(mantissa - 5) < 1e-9)
          << span << " " << t.step;
      EXPECT_LE(t.values.size(), size_t(target + 2)) << span;
      EXPECT_GE(t.values.size(), size_t(target / 2 + 1)) << span;
    }
}

TEST(AxisTicks, ExtendFramesTheDataWithTicksElseTicksStayInside) {
  const AxisTicks v = axis_ticks(0.13, 0.87, 5, true);
  EXPECT_DOUBLE_EQ(v.lo, 0.0);
  EXPECT_DOUBLE_EQ(v.hi, 1.0);
  EXPECT_EQ(tick_labels(v), (L{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
  const AxisTicks s = axis_ticks(1, 210, 5, false, 1);
  EXPECT_DOUBLE_EQ(s.lo, 1);
  EXPECT_DOUBLE_EQ(s.hi, 210);
  EXPECT_EQ(tick_labels(s), (L{"50", "100", "150", "200"}));
}

TEST(AxisTicks, WholeStepsNeverGetFractionalTicks) {
  EXPECT_EQ(labels(1, 3, 8, false, 1), (L{"1", "2", "3"}));
  EXPECT_EQ(labels(5, 5, 5, false, 1), (L{"5"}));  // one step: widened around it
}

TEST(AxisTicks, OneValueIsWidenedAroundIt) {
  const AxisTicks t = axis_ticks(0.25, 0.25, 5, true);
  EXPECT_LT(t.lo, 0.25);
  EXPECT_GT(t.hi, 0.25);
  EXPECT_EQ(labels(0, 0), (L{"-1", "-0.5", "0", "0.5", "1"}));
}

TEST(AxisTicks, LabelsAreExactAtTheStepWithoutTrailingZeros) {
  EXPECT_EQ(labels(0, 1, 4), (L{"0", "0.5", "1"}));  // 0.25 apart is not 1-2-5: 0.5
  EXPECT_EQ(labels(0, 0.2, 4), (L{"0", "0.05", "0.1", "0.15", "0.2"}));
  EXPECT_EQ(labels(0, 0.6, 6), (L{"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6"}));
  EXPECT_EQ(labels(-0.1, 0.1, 2), (L{"-0.1", "0", "0.1"}));  // zero as "0", never "-0"
  EXPECT_EQ(labels(0, 4000, 4), (L{"0", "1000", "2000", "3000", "4000"}));
}

// Issue 28's clipped label: a curve between 1e-10 and 3e-10 reads in short exponent form.
TEST(AxisTicks, TinyAndHugeValuesUseTheExponentForm) {
  EXPECT_EQ(labels(1e-10, 2.94e-10, 4), (L{"1e-10", "1.5e-10", "2e-10", "2.5e-10", "3e-10"}));
  EXPECT_EQ(labels(0, 3e6, 3), (L{"0", "1e+06", "2e+06", "3e+06"}));
  EXPECT_EQ(labels(0, 0.0025, 5), (L{"0", "5e-04", "1e-03", "1.5e-03", "2e-03", "2.5e-03"}));
}

}  // namespace
}  // namespace realign
