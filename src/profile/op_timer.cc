#include "profile/op_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/torch_compat.h"

namespace realign::profile {
namespace {

// On a GPU, how many runs one sample queues before it synchronises: enough for ~2 ms, so that the launch and
// synchronisation latency (~10-20 us a sample) is a small part of a short kernel's time. On a CPU, one.
int runs_per_sample(const std::function<void()>& fn, const at::Device& device) {
  if (!device.is_cuda()) return 1;
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  torch_compat::synchronize(device);
  const double one = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return int(std::clamp(std::ceil(2e-3 / std::max(one, 1e-7)), 1.0, 100.0));
}

}  // namespace

double time_op(const std::function<void()>& fn, const at::Device& device, int warmup, int repeats,
               double min_seconds) {
  for (int i = 0; i < warmup; ++i) fn();
  torch_compat::synchronize(device);
  const int runs = runs_per_sample(fn, device);
  std::vector<double> samples;
  double total = 0;
  while (int(samples.size()) < repeats || total < min_seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < runs; ++r) fn();
    torch_compat::synchronize(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    samples.push_back(s / runs);
    total += s;
    if (samples.size() > 1000) break;
  }
  std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace realign::profile
