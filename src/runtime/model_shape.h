// ModelShape: what every rank knows of a model whether or not it holds any of it (a rank outside the model's
// home layout holds nothing): enough to take part in moving its shards and to build a copy of it elsewhere.
#pragma once

#include <ATen/core/Tensor.h>

#include "graph/param_layout.h"
#include "runtime/device_placement.h"

namespace realign::runtime {

struct ModelShape {
  ModelSpec spec;
  HeadKind head = HeadKind::kLanguageModel;
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::Device(at::kCPU);
};

// The torch device and dtype of a rank's placement: the one place they are turned into torch's terms.
inline at::Device torch_device(const DevicePlacement& p) {
  return p.cuda ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(p.cuda_index)) : at::Device(at::kCPU);
}
inline at::ScalarType torch_dtype(const DevicePlacement& p) {
  return p.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
}

}  // namespace realign::runtime
