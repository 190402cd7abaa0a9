// TrainedModel: a model that owns its parameters and optimizer state in its train layout (actor, critic,
// reward model during its stage), and the one place gradients become an update: dp all-reduce, global-norm
// clipping over tp/pp, AdamW step.
#pragma once

#include <memory>
#include <vector>

#include "model/transformer.h"
#include "runtime/adamw.h"
#include "runtime/call_context.h"

namespace realign::runtime {

struct TrainedModel {
  std::unique_ptr<model::Transformer> model;
  std::unique_ptr<AdamW> optim;
  OptimConfig config;
  std::vector<at::Tensor> params;  // in param_infos() order
  std::vector<bool> counted;       // adds to the gradient norm on this rank (replicated over tp: tp rank 0)
};

// `total_steps`: optimizer steps of the whole run (the cosine schedule's length).
TrainedModel make_trained_model(std::unique_ptr<model::Transformer> model, const OptimConfig& config,
                                int64_t total_steps);

struct UpdateInfo {
  double grad_norm = 0;
  double lr = 0;
};
// After backward(): averages gradients over ctx.dp, clips to config.grad_clip, steps, zeroes the gradients.
UpdateInfo apply_gradients(const CallContext& ctx, TrainedModel& m);

}  // namespace realign::runtime
