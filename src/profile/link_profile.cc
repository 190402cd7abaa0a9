#include "profile/link_profile.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "core/check.h"

namespace realign::profile {

LinkFit fit_alpha_beta(const std::vector<std::pair<double, double>>& samples) {
  REALIGN_CHECK(samples.size() >= 2);
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(samples.size());
  for (const auto& [x, y] : samples) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denom = n * sxx - sx * sx;
  REALIGN_CHECK(denom > 0) << "needs two distinct message sizes";
  const double slope = (n * sxy - sx * sy) / denom;  // seconds per byte
  const double intercept = (sy - slope * sx) / n;
  LinkFit fit;
  fit.samples = samples;
  fit.latency_s = std::max(0.0, intercept);
  fit.bandwidth = slope > 0 ? 1.0 / slope : 0.0;
  return fit;
}

LinkFit measure_link(comm::Group& group, const std::vector<int64_t>& sizes_bytes, int repeats) {
  REALIGN_CHECK(group.size() >= 2) << "a link needs two ranks";
  const int rank = group.rank();
  std::vector<std::pair<double, double>> samples;
  for (int64_t bytes : sizes_bytes) {
    at::Tensor buffer = at::zeros({std::max<int64_t>(1, bytes / 4)}, at::kFloat);
    group.barrier();
    std::vector<double> times;
    for (int r = -1; r < repeats; ++r) {  // r = -1 warms up
      const auto t0 = std::chrono::steady_clock::now();
      if (rank == 0) {
        group.send(buffer, 1);
        group.recv(buffer, 1);
      } else if (rank == 1) {
        group.recv(buffer, 0);
        group.send(buffer, 0);
      }
      const double round_trip = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r >= 0) times.push_back(round_trip / 2);
    }
    std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
    samples.emplace_back(double(buffer.nbytes()), times[times.size() / 2]);
  }
  group.barrier();
  if (rank != 0) return LinkFit{};
  LinkFit fit = fit_alpha_beta(samples);
  // Noise can put the fitted line through the origin; the smallest message's time bounds the latency then.
  if (fit.latency_s <= 0) fit.latency_s = samples.front().second;
  return fit;
}

}  // namespace realign::profile
