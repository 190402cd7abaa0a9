#include "core/units.h"

#include <cmath>
#include <cstdio>

namespace realign {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string format_seconds(double s) {
  char buf[48];
  if (!std::isfinite(s)) return "inf";
  if (s < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.0f us", s * 1e6);
  } else if (s < 1.0) {
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1e3);
  } else if (s < 120.0) {
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  } else {
    const long total = std::lround(s);
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", total / 60, total % 60);
  }
  return buf;
}

}  // namespace realign
