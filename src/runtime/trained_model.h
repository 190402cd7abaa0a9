// TrainedModel: a model that owns its parameters and optimizer state in its train layout (actor, critic,
// reward model during its stage), and the one place gradients become an update: the tied-embedding sync across
// pipeline stages, dp all-reduce (or ZeRO-1 reduce-scatter), global-norm clipping over dp/tp/pp, AdamW step.
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
  // Adds to the gradient norm on this rank: every parameter counted once over tp and pp (replicated over tp: tp
  // rank 0; a tied embedding held by the first and last pipeline stages: the first stage).
  std::vector<bool> counted;
};

// `total_steps`: optimizer steps of the whole run (the cosine schedule's length).
TrainedModel make_trained_model(std::unique_ptr<model::Transformer> model, const OptimConfig& config,
                                int64_t total_steps);

struct UpdateInfo {
  double grad_norm = 0;
  double lr = 0;
};
// After backward() (every micro-batch's): sums a tied embedding's two copies' gradients over ctx.pp, averages
// gradients over ctx.dp, clips to the optimizer's grad_clip (global norm over dp-reduced grads, every parameter
// counted once over tp and pp), steps and zeroes the gradients. With the optimizer's zero1 and dp > 1 the
// average, the clip and the step run on this rank's ZeRO-1 share (AdamW::step_zero1). Collective over the
// call's dp, tp and pp groups. grad_norm and lr are equal on every rank of the call.
UpdateInfo apply_gradients(const CallContext& ctx, TrainedModel& m);

// Collective over ctx.dp: makes m.optim's state complete on every dp rank (ZeRO-1 shares gathered) so that a
// checkpoint can be saved from any of them. No-op without zero1.
void gather_optimizer_state(const CallContext& ctx, TrainedModel& m);

}  // namespace realign::runtime
