// The pieces pipeline_forward and pipeline_train_1f1b share: argument checks, the host buffers that carry
// activations between stages, and the broadcast of variably-shaped tensors from one pp rank to all.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "comm/group.h"
#include "model/token_batch.h"
#include "model/transformer.h"

namespace realign::runtime {

// Tags of the stage-to-stage messages: activations go down the pipeline, their gradients come back up.
// Matching per pair and tag is in posting order (comm/group.h), so one tag per direction suffices.
constexpr int kActivationTag = 0;
constexpr int kGradientTag = 1;
constexpr int kTiedGradTag = 2;  // first <-> last stage, sync_tied_embedding_grads
constexpr int kTokenTag = 3;     // last stage -> the others, pipeline_generate's sampled tokens

// REALIGN_CHECKs that `pp` is the model's pipeline group and that the micro-batches are well formed.
void check_pipeline_args(const comm::Group& pp, const model::Transformer& model,
                         const std::vector<model::TokenBatch>& micro_batches, const char* what);

// An uninitialised host tensor for one stage-boundary tensor of `batch`: (B, T, H) in the model's dtype.
at::Tensor boundary_buffer(const model::Transformer& model, const model::TokenBatch& batch);

// `t` on the host and contiguous (the comm groups' requirement), without a copy when it already is.
at::Tensor to_host(const at::Tensor& t);

// A receive posted into a fresh boundary buffer: wait() returns the filled buffer.
class PostedRecv {
 public:
  PostedRecv() = default;
  PostedRecv(comm::Group& group, at::Tensor buffer, int src, int tag);
  bool posted() const { return op_ != nullptr; }
  at::Tensor wait();

 private:
  at::Tensor buffer_;
  std::unique_ptr<comm::PendingOp> op_;
};

// Broadcasts `tensors` (meaningful on `root` only; any shapes and dtypes) to every member of `group`: one
// header broadcast with the shapes and dtypes, one byte buffer with the data. Returns host tensors.
std::vector<at::Tensor> broadcast_tensors(comm::Group& group, const std::vector<at::Tensor>& tensors,
                                          int root);

}  // namespace realign::runtime
