// Times one operation on a device: warm-up, then the median of repeated runs, synchronising CUDA so the
// clock sees the kernels and not their launch (on CUDA a sample is the mean of back-to-back runs between two
// synchronisations, ~2 ms of them, so that the synchronisation's own latency does not count).
#pragma once

#include <ATen/ATen.h>

#include <functional>

namespace realign::profile {

// Median seconds of `fn` over `repeats` runs after `warmup` runs (at least `min_seconds` of runs in total).
double time_op(const std::function<void()>& fn, const at::Device& device, int warmup = 2, int repeats = 5,
               double min_seconds = 0.05);

}  // namespace realign::profile
