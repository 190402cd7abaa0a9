#include "core/axis_ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace realign {
namespace {

// The smallest 1, 2 or 5 x 10^k at least `raw`.
double nice_step(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  return 10 * p;
}

// Decimal digits a multiple of `step` needs after the point: 0.25 apart needs 2, 0.5 apart 1, 20 apart 0.
int decimals_of(double step) {
  int d = 0;
  while (d < 17 && std::fabs(step * std::pow(10.0, d) - std::round(step * std::pow(10.0, d))) >
                       1e-6 * step * std::pow(10.0, d))
    ++d;
  return d;
}

// "2.50e-10" -> "2.5e-10", "1.0e+06" -> "1e+06": the mantissa without trailing zeros.
std::string trim_mantissa(std::string s) {
  const size_t e = s.find('e');
  std::string mantissa = s.substr(0, e), exponent = e == std::string::npos ? "" : s.substr(e);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + exponent;
}

}  // namespace

AxisTicks axis_ticks(double lo, double hi, int target, bool extend, double min_step) {
  if (lo > hi) std::swap(lo, hi);
  if (!(hi > lo)) {  // one value: a range around it that still reads as that value
    const double half = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= half, hi += half;
  }
  AxisTicks t;
  t.step = std::max(min_step, nice_step((hi - lo) / std::max(1, target)));
  // Whole multiples of the step (k * step, not a running sum) keep labels such as 0.3 exact.
  // Outward to the ticks around the data with `extend`, else inward to the ticks inside it.
  const double from = extend ? std::floor(lo / t.step + 1e-9) : std::ceil(lo / t.step - 1e-9);
  const double to = extend ? std::ceil(hi / t.step - 1e-9) : std::floor(hi / t.step + 1e-9);
  if (extend)
    t.lo = std::min(lo, from * t.step), t.hi = std::max(hi, to * t.step);
  else
    t.lo = lo, t.hi = hi;
  for (double k = from; k <= to; ++k) t.values.push_back(k == 0 ? 0.0 : k * t.step);
  return t;
}

std::vector<std::string> tick_labels(const AxisTicks& t) {
  double biggest = 0;
  for (double v : t.values) biggest = std::max(biggest, std::fabs(v));
  const bool scientific = t.step < 1e-3 || biggest >= 1e6;
  std::vector<std::string> out;
  char buf[48];
  for (double v : t.values) {
    if (v == 0) {
      out.push_back("0");
    } else if (scientific) {
      // Mantissa digits down to the step's first digit: 1.5e-10 beside 1e-10 at 5e-11 apart.
      const int digits = std::max(
          0, int(std::floor(std::log10(std::fabs(v)) + 1e-9) - std::floor(std::log10(t.step) + 1e-9)));
      std::snprintf(buf, sizeof buf, "%.*e", std::min(digits, 15), v);
      out.push_back(trim_mantissa(buf));
    } else {
      std::snprintf(buf, sizeof buf, "%.*f", decimals_of(t.step), v);
      out.push_back(trim_mantissa(buf));
    }
  }
  return out;
}

}  // namespace realign
