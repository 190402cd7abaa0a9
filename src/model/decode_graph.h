// DecodeGraph: one decoding step of generate() recorded once as a CUDA graph and replayed every later step, so
// a step costs one graph launch instead of a few thousand kernel launches from the host (a 1.5B LLaMA's step
// launched ~2,000 kernels: 60 ms on an H200 whose weights read in under 1 ms). The step runs with the KV
// cache's fixed shapes (KvCache::write_slots: the slot is a device tensor, attention spans the whole
// capacity), its inputs copied into buffers the graph reads.
// Available where the step is one device's own work: a libtorch built with CUDA (REALIGN_WITH_CUDA_GRAPHS,
// set by src/model's CMakeLists), the model on a GPU, one pipeline stage, no tensor or expert parallel peers
// (their collectives go through Gloo on the host) and no mixture-of-experts layer (its routing sizes are read
// on the host). Elsewhere generate() launches each step's kernels, as before; the CPU path never changes.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "model/kv_cache.h"
#include "model/transformer.h"

namespace realign::model {

// generate() records a graph only for a call of at least this many steps: the recording costs about two
// eager steps plus the graph's instantiation, once per call (the graph holds this call's KV cache), which a
// few replays do not repay. A choice, not yet a fit: bench/model reports the once-per-call cost it measures.
constexpr int64_t kMinStepsForDecodeGraph = 32;

class DecodeGraph {
 public:
  // Why `model` cannot decode through a graph; empty when it can.
  static std::string unavailable_because(const Transformer& model);
  // A graph for `cache` (whose rows and capacity it keeps); null where unavailable_because is not empty.
  static std::unique_ptr<DecodeGraph> make(Transformer& model, KvCache& cache);
  ~DecodeGraph();

  // One step: tokens, positions and valid (B, 1) at slot cache.length, which it advances. The first step
  // runs eagerly on the graph's stream (warming its libraries there), the second records the graph, every
  // later one replays it. Returns the hidden state (B, 1, H), valid until the next step.
  at::Tensor step(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& valid);
  int64_t replays() const { return replays_; }

 private:
  struct Impl;
  DecodeGraph(Transformer& model, KvCache& cache, std::unique_ptr<Impl> impl);
  at::Tensor run_body();

  Transformer& model_;
  KvCache& cache_;
  std::unique_ptr<Impl> impl_;
  at::Tensor tokens_, positions_, valid_, slot_, out_;  // the buffers the graph reads and writes
  int64_t steps_ = 0, replays_ = 0;
};

}  // namespace realign::model
