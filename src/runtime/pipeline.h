// Pipeline-parallel execution of a Transformer split into stages over a pp group: pipelined inference over
// micro-batches, the 1F1B training schedule, and the gradient sync of a tied embedding held by two stages.
//
// Contract (as comm/group.h): every rank of `pp` calls the same function with the same micro-batch shapes
// (tokens (B, T) may differ between micro-batches, never between stages); pp rank i runs stage i, i.e.
// pp.rank() == model.parallel().stage and pp.size() == model.parallel().n_stages. With tp > 1, each tp rank
// of a stage talks only to the same tp rank of the neighbouring stages (its own pp group from
// comm::World::axis_groups), so the tp ranks of a stage must all run the same call.
// Stage-to-stage activations (B, T, H) and their gradients travel in the model's dtype with isend/irecv
// through host memory (the comm groups move CPU tensors; a CUDA model stages through the CPU); the receiver
// knows each shape from the micro-batch and the hidden size, so nothing but the tensor is sent. Sends are
// posted and left in flight, so a stage computes micro-batch m+1 while the next stage computes m.
//
// Not supported: interleaved (virtual) stages, i.e. several model chunks per rank; zero-bubble / 2BW
// schedules; overlapping the tp collectives of one micro-batch with the compute of another.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "comm/group.h"
#include "model/generate.h"
#include "model/token_batch.h"
#include "model/transformer.h"

namespace realign::runtime {

// Called on the last stage with the hidden state after the final norm (B, T, H) of micro-batch `micro`.
// Inference: returns any tensor (e.g. token_logprobs, values, or several of them stacked). Training: returns
// the scalar loss of that micro-batch, already scaled the way the caller wants the gradients accumulated
// (e.g. divided by the number of micro-batches).
using StageHead = std::function<at::Tensor(const at::Tensor& hidden, int micro)>;

// Pipelined inference (under NoGradGuard). Stage s runs micro-batches 0, 1, ... in order, receiving each
// input from stage s-1 and sending its output to stage s+1; at most two sends are in flight per stage. The
// last stage applies `head` to each micro-batch; the outputs are then broadcast over `pp` (one header and one
// byte buffer), so every stage returns them: one CPU tensor per micro-batch, with the head's shape and dtype.
std::vector<at::Tensor> pipeline_forward(comm::Group& pp, model::Transformer& model,
                                         const std::vector<model::TokenBatch>& micro_batches,
                                         const StageHead& head);

// One 1F1B (PipeDream-flush) pass over the micro-batches: stage s of S runs min(S - s - 1, M) warm-up
// forwards, then alternates one forward and one backward, then the remaining backwards. The last stage calls
// `loss_fn` in each forward and backpropagates the loss; other stages receive the gradient of their output
// from stage s+1 and send the gradient of their input to stage s-1. Parameter gradients accumulate into
// .grad exactly as a single-stage run that calls backward on every micro-batch's loss (nothing is zeroed).
// Peak in-flight activations on stage s: min(S - s, M) micro-batches' autograd graphs (the first stage holds
// the most); a micro-batch's graph and received input are freed after its backward.
// Returns the per-micro-batch losses (as returned by loss_fn) on every stage (broadcast from the last).
// A tied embedding's two copies are NOT summed here: call sync_tied_embedding_grads once per optimizer step,
// after all micro-batches' backwards (calling it after each pass would double-count earlier passes).
std::vector<double> pipeline_train_1f1b(comm::Group& pp, model::Transformer& model,
                                        const std::vector<model::TokenBatch>& micro_batches,
                                        const StageHead& loss_fn);

// Pipelined KV-cache generation (under NoGradGuard), as ReaL generates with pp > 1: the prompts are cut into
// micro-batches of `rows_per_micro` rows, each with its own KV cache on every stage. Step t of micro-batch m
// runs stage by stage (prefill at t = 0, one token after); the last stage samples from its logits
// (model::sample_next: per-row generators, tp-consistent) and sends the tokens to every other stage: the
// first embeds them for step t + 1, and all of them track which rows stopped, so every stage knows when a
// micro-batch is finished without another message. Stages work through (t, m) in the same order, t-major,
// skipping finished micro-batches, so while the last stage samples micro-batch m the first already runs
// m + 1: with at least pp micro-batches no stage waits for a token (the bubble is the prefill's fill and the
// last steps' drain). Per step and micro-batch: one (B, 1, H) activation per stage boundary and pp - 1
// token messages of B int64 from the last stage.
// With options.row_seeds every row samples what model::generate samples for it, whatever the micro-batches;
// without them one generator is shared by the micro-batches in schedule order (reproducible, but not equal
// to a single batch's samples). Every rank of `pp` passes the same prompts and options and returns the same
// result (tokens, log-probs broadcast from the last stage, lengths); Errors as model::generate.
model::GenerateResult pipeline_generate(comm::Group& pp, model::Transformer& model,
                                        const std::vector<std::vector<int64_t>>& prompts,
                                        const model::GenerateOptions& options, int64_t rows_per_micro);

// Tied embeddings (GPT-2, tied LLaMA/Qwen) with n_stages > 1: embed.weight is held by the first stage (as the
// embedding) and by the last stage (as the LM head); each copy's .grad holds only its own use. This sums the
// two gradients (point-to-point between the first and last stage; middle stages return at once) so both
// copies hold the same full gradient, bit for bit, and stay equal after identical optimizer steps. A missing
// .grad counts as zero. No-op for untied models, value heads and n_stages == 1.
// Gradient clipping across stages must count embed.weight once (e.g. on the first stage only).
void sync_tied_embedding_grads(comm::Group& pp, model::Transformer& model);

}  // namespace realign::runtime
