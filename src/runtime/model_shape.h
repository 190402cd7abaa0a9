// ModelShape: what every rank knows of a model whether or not it holds any of it (a rank outside the model's
// home layout holds nothing): enough to take part in moving its shards and to build a copy of it elsewhere.
#pragma once

#include <ATen/core/Tensor.h>

#include "graph/param_layout.h"

namespace realign::runtime {

struct ModelShape {
  ModelSpec spec;
  HeadKind head = HeadKind::kLanguageModel;
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::Device(at::kCPU);
};

}  // namespace realign::runtime
