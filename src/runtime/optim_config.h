// The optimizer's settings (AdamW with its learning-rate schedule, gradient clipping, ZeRO-1): plain data the
// engine's optimizer takes; the trainer reads them from the `optim` sections of a run config.
#pragma once

#include <cstdint>
#include <string>

namespace realign::runtime {

struct OptimConfig {
  double lr = 1e-3;
  int64_t warmup_steps = 0;         // linear warm-up from 0
  std::string schedule = "cosine";  // cosine | constant (after warm-up)
  double min_lr_ratio = 0.1;        // cosine floor, as a share of lr
  double weight_decay = 0.0;        // decoupled (AdamW), on matrices only
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double grad_clip = 1.0;  // global L2 norm over every shard; <= 0 disables
  // ZeRO-1: each dp rank keeps the AdamW moments of, and updates, only its 1/dp share of the flattened
  // parameters (gradients reduce-scattered, updated parameters all-gathered). Same updates within fp32
  // round-off.
  bool zero1 = false;
  // Not a config key: set from the rank's runtime/device_placement.h (true on a GPU). Parameters that are not
  // fp32 are updated through fp32 master copies the optimizer keeps, so updates below bf16's resolution add
  // up instead of rounding away.
  bool fp32_master = false;
};

}  // namespace realign::runtime
