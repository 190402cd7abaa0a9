#include "runtime/trained_model.h"

#include <ATen/ATen.h>

#include "core/check.h"
#include "core/error.h"
#include "runtime/grad_sync.h"
#include "runtime/pipeline.h"

namespace realign::runtime {

TrainedModel make_trained_model(std::unique_ptr<model::Transformer> model, const OptimConfig& config,
                                int64_t total_steps) {
  TrainedModel t;
  t.config = config;
  const int tp_rank = model->tp().rank();
  // The last stage's copy of a tied embedding holds the same (synced) gradient as the first stage's.
  const bool tied_copy = model->spec().tied_embeddings && model->head() == HeadKind::kLanguageModel &&
                         model->parallel().n_stages > 1 && !model->first_stage();
  for (const ParamInfo& info : model->param_infos()) {
    t.params.push_back(model->named_params().at(info.name));
    t.counted.push_back((info.split_dim >= 0 || tp_rank == 0) && !(tied_copy && info.name == "embed.weight"));
  }
  t.optim = std::make_unique<AdamW>(model->named_params(), config, total_steps);
  t.model = std::move(model);
  return t;
}

UpdateInfo apply_gradients(const CallContext& ctx, TrainedModel& m) {
  // Once per optimizer step, after every micro-batch's backward (pipeline.h).
  sync_tied_embedding_grads(ctx.pp_group(), *m.model);
  const OptimConfig& config = m.optim->config();
  UpdateInfo info;
  const bool expert_parallel = ctx.ep && ctx.ep->size() > 1;
  if (expert_parallel && config.zero1)
    throw Error("train.optim.zero1", "ZeRO-1 with expert parallelism (ep > 1) is not supported yet");
  if (expert_parallel) {
    // The routed experts' gradients are summed over the ranks holding the same experts, the rest averaged
    // over dp as usual; the norm counts each expert once over its ep group.
    REALIGN_CHECK(ctx.edp) << ctx.name << ": an ep group without its edp group";
    std::vector<at::Tensor> experts, others;
    std::vector<bool> is_expert;
    for (size_t i = 0; i < m.params.size(); ++i) {
      is_expert.push_back(m.model->param_infos()[i].expert);
      (is_expert.back() ? experts : others).push_back(m.params[i]);
    }
    allreduce_gradients(others, ctx.dp_group());
    sync_expert_gradients(experts, *ctx.edp, ctx.dp->size());
    info.grad_norm = clip_grad_norm(m.params, m.counted, ctx.tp_group(), ctx.pp_group(), config.grad_clip,
                                    ctx.ep.get(), &is_expert);
    info.lr = m.optim->step();
  } else if (config.zero1 && ctx.dp->size() > 1) {
    std::map<std::string, bool> counted;
    for (size_t i = 0; i < m.params.size(); ++i) counted[m.model->param_infos()[i].name] = m.counted[i];
    auto [norm, lr] = m.optim->step_zero1(
        ctx.dp_group(), ctx.tp_group(), ctx.pp_group(), [&](const std::string& n) { return counted.at(n); },
        config.grad_clip);
    info.grad_norm = norm, info.lr = lr;
  } else {
    allreduce_gradients(m.params, ctx.dp_group());
    info.grad_norm = clip_grad_norm(m.params, m.counted, ctx.tp_group(), ctx.pp_group(), config.grad_clip);
    info.lr = m.optim->step();
  }
  m.optim->zero_grad();
  return info;
}

void gather_optimizer_state(const CallContext& ctx, TrainedModel& m) {
  if (m.optim->config().zero1) m.optim->gather_state(ctx.dp_group());
}

}  // namespace realign::runtime
