// Chart axes: "nice" tick positions (1, 2 or 5 x 10^k apart) and labels short enough to sit beside them.
#pragma once

#include <string>
#include <vector>

namespace realign {

struct AxisTicks {
  double lo = 0, hi = 1;       // the axis range (the data's, or moved out to the outer ticks)
  double step = 1;             // 1, 2 or 5 x 10^k
  std::vector<double> values;  // the multiples of step within [lo, hi], ascending (exact zero, never -0)
};

// Ticks over [lo, hi], about `target` intervals apart (at most target + 2 ticks). An empty range is widened
// around its value. With `extend`, lo and hi move out to the nearest ticks, so the first and last ticks frame
// the data (a value axis); without, the range stays the data's (a step axis). The step is at least `min_step`
// (1 for whole steps).
AxisTicks axis_ticks(double lo, double hi, int target, bool extend, double min_step = 0);

// One label per tick, each exact at the step's resolution with no trailing zeros: "0", "0.25", "150", or,
// where fixed notation would be long (steps under 0.001, values from 10^6), "2.5e-10", "1e+06". One notation
// for the whole axis, so neighbours read alike.
std::vector<std::string> tick_labels(const AxisTicks& ticks);

}  // namespace realign
