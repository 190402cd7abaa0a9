#include "profile/op_timer.h"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace realign::profile {
namespace {
void sync(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}
}  // namespace

double time_op(const std::function<void()>& fn, const at::Device& device, int warmup, int repeats,
               double min_seconds) {
  for (int i = 0; i < warmup; ++i) fn();
  sync(device);
  std::vector<double> samples;
  double total = 0;
  while (int(samples.size()) < repeats || total < min_seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    sync(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    samples.push_back(s);
    total += s;
    if (samples.size() > 1000) break;
  }
  std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace realign::profile
