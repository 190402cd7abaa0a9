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

// Which HeadOutputs a pass computes: the language-model head's log-probs (with or without the entropy), or a
// value head's values.
enum class WantedOutputs { kLogprobs, kLogprobsEntropy, kValues };

// (B, T) fp32 each; undefined when not asked for.
struct HeadOutputs {
  at::Tensor logprobs, entropy, values;
};

// Rows per micro-batch: `rows` cut into ctx.micro_batches (the plan's) when > 0; otherwise the whole batch at
// pp = 1 and 2 * pp micro-batches at pp > 1 (so that the pipeline has more micro-batches than stages).
int64_t micro_batch_rows(const CallContext& ctx, int64_t rows);

// No gradients. Outputs on the host, where the rows they go into live, whatever the model's device.
HeadOutputs forward_outputs(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch,
                            WantedOutputs what);

// A loss that is a sum over rows: the contribution of rows [begin, end) of every batch, given those rows'
// outputs (one HeadOutputs per batch, same order as passed), with figures to report summed the same way.
// The call's loss is the sum over its micro-batches, so a train call writes its loss as a sum over rows over
// a fixed denominator (e.g. its token count), never as a mean of whatever rows it is given.
struct RowsLoss {
  at::Tensor loss;            // scalar, differentiable
  std::vector<double> stats;  // n_stats of them
};
using LossOfRows =
    std::function<RowsLoss(const std::vector<HeadOutputs>& outputs, int64_t begin, int64_t end)>;

struct LossSums {
  double loss = 0;
  std::vector<double> stats;
};

// Accumulates d loss / d params into the parameters' .grad (gradient accumulation over micro-batches: rows
// [begin, end) of every batch together, micro_batch_rows each) and returns the sums of the losses and stats
// (equal on every rank of ctx.tp and ctx.pp). pp = 1: forward and backward per micro-batch. pp > 1 with one
// batch: 1F1B over the micro-batches, the loss on the last stage (its sums broadcast over the stages). pp > 1
// with several batches (pair losses: DPO, Bradley-Terry, whose rows are in different batches), in two passes:
// a pipelined forward (no grad) gives the outputs on every stage; the loss of all rows is backpropagated to
// those outputs (as leaves), giving G = d loss / d outputs; then one 1F1B pass backpropagates the linearised
// loss sum(outputs * G), whose parameter gradient equals the loss's: one extra forward per update.
// All batches have the same number of rows.
LossSums backward_loss(const CallContext& ctx, model::Transformer& model,
                       const std::vector<const SequenceBatch*>& batches, WantedOutputs what, size_t n_stats,
                       const LossOfRows& loss_fn);

}  // namespace realign::runtime
