#include "runtime/inference_calls.h"

#include <ATen/ATen.h>

#include "core/error.h"

namespace realign::runtime {

void require_single_stage(const CallContext& ctx) {
  if (ctx.pp->size() != 1)
    throw Error(ctx.name, "pipeline-parallel execution of this call is not supported yet (pp = " +
                              std::to_string(ctx.pp->size()) + "); use a plan with pp = 1");
}

namespace {

template <class F>
at::Tensor by_micro_batch(const CallContext& ctx, const SequenceBatch& batch, F&& run) {
  require_single_stage(ctx);
  at::NoGradGuard no_grad;
  const int64_t B = batch.size();
  const int64_t step = ctx.micro_batch_rows > 0 ? ctx.micro_batch_rows : std::max<int64_t>(B, 1);
  std::vector<at::Tensor> parts;
  for (int64_t b = 0; b < B; b += step) parts.push_back(run(slice_rows(batch, b, std::min(B, b + step))));
  return parts.size() == 1 ? parts[0] : at::cat(parts, 0);
}

}  // namespace

at::Tensor logprobs_call(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch,
                         at::Tensor* entropy) {
  std::vector<at::Tensor> entropies;
  at::Tensor lp = by_micro_batch(ctx, batch, [&](const SequenceBatch& mb) {
    at::Tensor hidden = model.forward(mb.batch);
    at::Tensor ent;
    at::Tensor out = model.token_logprobs(hidden, mb.targets, entropy ? &ent : nullptr);
    if (entropy) entropies.push_back(ent);
    return out;
  });
  if (entropy) *entropy = entropies.size() == 1 ? entropies[0] : at::cat(entropies, 0);
  return lp;
}

at::Tensor values_call(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch) {
  return by_micro_batch(ctx, batch,
                        [&](const SequenceBatch& mb) { return model.values(model.forward(mb.batch)); });
}

at::Tensor scores_call(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch) {
  return last_response_value(values_call(ctx, model, batch), batch);
}

}  // namespace realign::runtime
