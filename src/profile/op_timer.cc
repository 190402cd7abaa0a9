#include "profile/op_timer.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/torch_compat.h"

namespace realign::profile {
double time_op(const std::function<void()>& fn, const at::Device& device, int warmup, int repeats,
               double min_seconds) {
  for (int i = 0; i < warmup; ++i) fn();
  torch_compat::synchronize(device);
  std::vector<double> samples;
  double total = 0;
  while (int(samples.size()) < repeats || total < min_seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    torch_compat::synchronize(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    samples.push_back(s);
    total += s;
    if (samples.size() > 1000) break;
  }
  std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace realign::profile
