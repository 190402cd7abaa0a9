#include "train/inference_calls.h"

#include <ATen/ATen.h>

#include "core/error.h"
#include "runtime/call_forward.h"

namespace realign::runtime {

void require_single_stage(const CallContext& ctx) {
  if (ctx.pp->size() != 1)
    throw Error(ctx.name, "pipeline-parallel execution of this call is not supported yet (pp = " +
                              std::to_string(ctx.pp->size()) + "); use a plan with pp = 1");
}

at::Tensor logprobs_call(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch,
                         at::Tensor* entropy) {
  HeadOutputs o =
      forward_outputs(ctx, model, batch, entropy ? HeadKindOut::kLogprobsEntropy : HeadKindOut::kLogprobs);
  if (entropy) *entropy = o.entropy;
  return o.logprobs;
}

at::Tensor values_call(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch) {
  return forward_outputs(ctx, model, batch, HeadKindOut::kValues).values;
}

at::Tensor scores_call(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch) {
  return last_response_value(values_call(ctx, model, batch), batch);
}

}  // namespace realign::runtime
