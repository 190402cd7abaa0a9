#include "train/inference_calls.h"

#include <ATen/ATen.h>

#include "runtime/call_forward.h"

namespace realign::runtime {

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
