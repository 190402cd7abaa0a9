// The forward (and backward) pass under every inference and training call: the per-token head outputs of
// SequenceBatches, in micro-batches pipelined over ctx.pp when pp > 1 (runtime/pipeline.h), and the gradient
// of a loss of those outputs. Every rank of ctx.pp (and of ctx.tp) must pass the same batches; every one of
// them gets the same outputs and loss (broadcast from the last stage).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "model/transformer.h"
#include "runtime/call_context.h"
#include "runtime/sequence_batch.h"

namespace realign::runtime {

enum class HeadKindOut { kLogprobs, kLogprobsEntropy, kValues };

// (B, T) fp32 each; undefined when not asked for.
struct HeadOutputs {
  at::Tensor logprobs, entropy, values;
};

// Rows per micro-batch: `rows` cut into ctx.micro_batches (the plan's) when > 0; otherwise the whole batch at
// pp = 1 and 2 * pp micro-batches at pp > 1 (so that the pipeline has more micro-batches than stages).
// Inference and pipelined training follow it; training at pp = 1 runs the whole batch in one pass (gradient
// accumulation over micro-batches would need every loss cut into per-micro-batch sums: not yet).
int64_t micro_batch_rows(const CallContext& ctx, int64_t rows);

// No gradients. Outputs on the model's device.
HeadOutputs forward_outputs(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch,
                            HeadKindOut what);

// A scalar loss of the outputs of each batch (same order as passed).
using LossOfOutputs = std::function<at::Tensor(const std::vector<HeadOutputs>&)>;

// Accumulates d loss / d params into the parameters' .grad and returns the loss (detached). pp = 1: one
// autograd graph over the whole batches (no micro-batches). pp > 1, in two passes: a pipelined forward
// (no grad) gives the outputs on every stage; the loss of those outputs (as leaves) is backpropagated to
// them, giving G = d loss / d outputs; then one 1F1B pass over the micro-batches backpropagates the
// linearised loss sum(outputs * G), whose parameter gradient equals the loss's. Costs one extra forward per
// update over a direct 1F1B, and works for any loss, including pair losses (DPO, Bradley-Terry) whose rows
// sit in different micro-batches. loss_fn runs on every rank (stats it captures are equal everywhere).
at::Tensor backward_loss(const CallContext& ctx, model::Transformer& model,
                         const std::vector<const SequenceBatch*>& batches, HeadKindOut what,
                         const LossOfOutputs& loss_fn);

}  // namespace realign::runtime
