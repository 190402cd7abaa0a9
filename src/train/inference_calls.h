// Inference calls (no gradients): per-token log-probs of the sampled tokens (actor "old" log-probs,
// reference), per-token values (critic) and per-sequence scores (reward model). Each is a function of
// (call context, model, batch); ctx.micro_batches micro-batches bound the memory. With ctx.pp > 1
// the micro-batches are pipelined (runtime/call_forward.h): every rank of the call passes the same batch and
// gets the same outputs.
#pragma once

#include <ATen/core/Tensor.h>

#include "model/transformer.h"
#include "runtime/call_context.h"
#include "runtime/sequence_batch.h"

namespace realign::train {

// (B, T) fp32 log p(targets[t] | tokens[..t]); `entropy` (B, T) when given. Values outside the response mask
// are meaningless (mask them).
at::Tensor logprobs_call(const runtime::CallContext& ctx, model::Transformer& model,
                         const runtime::SequenceBatch& batch, at::Tensor* entropy = nullptr);
// (B, T) fp32 value head outputs.
at::Tensor values_call(const runtime::CallContext& ctx, model::Transformer& model,
                       const runtime::SequenceBatch& batch);
// (B) the value head at each sequence's last token.
at::Tensor scores_call(const runtime::CallContext& ctx, model::Transformer& model,
                       const runtime::SequenceBatch& batch);

}  // namespace realign::train
