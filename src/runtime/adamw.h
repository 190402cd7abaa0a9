// AdamW (Loshchilov & Hutter) over one rank's parameter shards, with a linear warm-up then cosine (or
// constant) learning-rate schedule. Its whole state (moments, step count) is plain tensors, so checkpoints
// restore it exactly and a resumed run takes bit-identical steps.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/train_config.h"

namespace realign::runtime {

// The learning rate of optimizer step `step` (0-based) of `total_steps`.
double scheduled_lr(const OptimConfig& config, int64_t step, int64_t total_steps);

class AdamW {
 public:
  // `params`: name -> leaf tensor (requires_grad). Weight decay applies to tensors of 2+ dimensions only
  // (not norms and biases), as is customary.
  AdamW(std::map<std::string, at::Tensor> params, OptimConfig config, int64_t total_steps);

  // One update from the current gradients (a parameter without a gradient is skipped); returns the lr used.
  double step();
  void zero_grad();
  int64_t steps_done() const { return step_; }

  // "m/<name>", "v/<name>" tensors and the step count, for checkpoints.
  std::map<std::string, at::Tensor> state_tensors() const;
  void load_state(const std::map<std::string, at::Tensor>& tensors, int64_t steps_done);

 private:
  std::map<std::string, at::Tensor> params_, m_, v_;
  OptimConfig config_;
  int64_t total_steps_;
  int64_t step_ = 0;
};

}  // namespace realign::runtime
