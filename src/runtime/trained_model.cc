#include "runtime/trained_model.h"

#include <ATen/ATen.h>

#include "runtime/grad_sync.h"

namespace realign::runtime {

TrainedModel make_trained_model(std::unique_ptr<model::Transformer> model, const OptimConfig& config,
                                int64_t total_steps) {
  TrainedModel t;
  t.config = config;
  const int tp_rank = model->tp().rank();
  for (const ParamInfo& info : model->param_infos()) {
    t.params.push_back(model->named_params().at(info.name));
    t.counted.push_back(info.split_dim >= 0 || tp_rank == 0);
  }
  t.optim = std::make_unique<AdamW>(model->named_params(), config, total_steps);
  t.model = std::move(model);
  return t;
}

UpdateInfo apply_gradients(const CallContext& ctx, TrainedModel& m) {
  allreduce_gradients(m.params, ctx.dp_group());
  UpdateInfo info;
  info.grad_norm = clip_grad_norm(m.params, m.counted, ctx.tp_group(), ctx.pp_group(), m.config.grad_clip);
  info.lr = m.optim->step();
  m.optim->zero_grad();
  return info;
}

}  // namespace realign::runtime
