#include "train/device_idle.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace realign::train {

double idle_share(const Timeline& timeline, const Layout& devices, double span_s) {
  if (span_s <= 0 || devices.size() <= 0) return 0;
  double busy = 0;
  for (int d = devices.first_device; d < devices.first_device + devices.size(); ++d) {
    std::vector<std::pair<double, double>> spans;
    for (const TimelineEvent& e : timeline.events)
      if (d >= e.first_device && d < e.first_device + e.n_devices)
        spans.emplace_back(std::max(0.0, e.start_s), std::min(span_s, e.end_s));
    std::sort(spans.begin(), spans.end());
    double covered_to = 0;
    for (const auto& [start, end] : spans) {
      const double from = std::max(start, covered_to);
      if (end > from) busy += end - from;
      covered_to = std::max(covered_to, end);
    }
  }
  return std::clamp(1.0 - busy / (span_s * devices.size()), 0.0, 1.0);
}

}  // namespace realign::train
