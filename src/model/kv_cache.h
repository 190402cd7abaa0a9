// KvCache: keys and values of every layer this rank holds, pre-allocated for the whole generation (no
// per-token reallocation). Rows advance in lock step: slot s of every row is written by the same forward call;
// rows whose prompts are shorter are left-padded, and `valid` marks the slots that hold real tokens.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace realign::model {

struct KvCache {
  std::vector<at::Tensor> k, v;  // per local layer: (B, n_kv_heads / tp, capacity, head_dim)
  at::Tensor valid;              // (B, capacity) bool
  int64_t length = 0;            // slots written so far
  // Fixed shapes (what a CUDA graph replays): when defined, a forward writes its Tq tokens at the slots this
  // (Tq) int64 tensor on the cache's device holds, and attends over the whole capacity, the slots not yet
  // written masked. Its shapes then do not depend on the step, and the slots can change between replays
  // without the host; `length` is still advanced by the caller's bookkeeping. Undefined: slots
  // [length, length + Tq) and keys [0, length + Tq), the shapes growing each step.
  at::Tensor write_slots;
  int64_t capacity() const { return valid.defined() ? valid.size(1) : 0; }
};

}  // namespace realign::model
