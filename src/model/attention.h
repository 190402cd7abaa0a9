// Scaled dot-product attention with an explicit boolean mask, written with matmul + softmax (libtorch 1.13
// has no public SDPA); on a GPU with libtorch 2.x, the fused kernel (core/torch_compat.h). Grouped-query
// attention without copying K/V: the query heads that share a KV head are folded into the query length.
#pragma once

#include <ATen/core/Tensor.h>

namespace realign::model {

// q (B, Hq, Tq, d), k and v (B, Hkv, Tk, d) with Hkv dividing Hq (query head h uses KV head h / (Hq / Hkv));
// mask (B, 1, Tq, Tk) bool, true = may attend; every query row must allow at least one key.
// Scores and softmax in fp32; returns (B, Hq, Tq, d) in q's dtype.
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask);

// Mask for a TokenBatch: causal within a segment (same id > 0), and within `sliding_window` tokens when > 0
// (query i sees key j when i - window < j <= i). Padding tokens see only themselves (keeps softmax finite).
// segments (B, T) int32 -> (B, 1, T, T) bool.
at::Tensor segment_mask(const at::Tensor& segments, int64_t sliding_window);

// Mask for queries at cache slots [first_slot, first_slot + Tq) over keys in slots [0, first_slot + Tq):
// a key must hold a real token (`valid` (B, S) bool, S >= first_slot + Tq), be at or before the query, and
// within the sliding window. Query slots that hold padding see only themselves. -> (B, 1, Tq, Tk) bool.
at::Tensor cache_mask(const at::Tensor& valid, int64_t first_slot, int64_t n_queries, int64_t sliding_window);

// The same rule for queries at the consecutive cache slots `slots` ((Tq) int64, on valid's device) over every
// key slot of the cache, [0, S): the slots after the queries are masked as not yet written. No host value
// depends on the slots, so a CUDA graph can replay it with others. -> (B, 1, Tq, S) bool.
at::Tensor cache_mask_at(const at::Tensor& valid, const at::Tensor& slots, int64_t sliding_window);

}  // namespace realign::model
