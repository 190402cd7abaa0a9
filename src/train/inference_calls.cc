#include "train/inference_calls.h"

#include <ATen/ATen.h>

#include "runtime/call_forward.h"

namespace realign::train {

at::Tensor logprobs_call(const runtime::CallContext& ctx, model::Transformer& model,
                         const runtime::SequenceBatch& batch, at::Tensor* entropy) {
  runtime::HeadOutputs o = runtime::forward_outputs(
      ctx, model, batch,
      entropy ? runtime::WantedOutputs::kLogprobsEntropy : runtime::WantedOutputs::kLogprobs);
  if (entropy) *entropy = o.entropy;
  return o.logprobs;
}

at::Tensor values_call(const runtime::CallContext& ctx, model::Transformer& model,
                       const runtime::SequenceBatch& batch) {
  return runtime::forward_outputs(ctx, model, batch, runtime::WantedOutputs::kValues).values;
}

at::Tensor scores_call(const runtime::CallContext& ctx, model::Transformer& model,
                       const runtime::SequenceBatch& batch) {
  return runtime::last_response_value(values_call(ctx, model, batch), batch);
}

}  // namespace realign::train
