#include "model/attention.h"

#include <ATen/ATen.h>

#include <cmath>

#include "core/check.h"
#include "core/torch_compat.h"

namespace realign::model {

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  const int64_t B = q.size(0), Hq = q.size(1), Tq = q.size(2), d = q.size(3);
  const int64_t Hkv = k.size(1), Tk = k.size(2);
  REALIGN_CHECK(Hq % Hkv == 0) << Hq << " query heads, " << Hkv << " KV heads";
  const int64_t rep = Hq / Hkv;
  // On a GPU, the libtorch's fused kernel where it has one (2.x), with the KV heads repeated to the query
  // heads (its memory-efficient kernel, the one taking a mask, wants as many): head h reads KV head h / rep,
  // through expand (repeat_interleave may read its size back to the host, which a CUDA graph cannot record).
  // The CPU keeps the code below, so CPU results do not depend on which libtorch built realign.
  if (torch_compat::kHasFusedAttention && q.is_cuda()) {
    const auto repeat = [&](const at::Tensor& t) {
      return rep == 1 ? t : t.unsqueeze(2).expand({B, Hkv, rep, Tk, d}).reshape({B, Hq, Tk, d});
    };
    return torch_compat::fused_attention(q, repeat(k), repeat(v), mask);
  }
  // (B, Hkv, rep * Tq, d): heads h = kv * rep + r are contiguous, so this is a view when q is contiguous.
  at::Tensor qg = q.reshape({B, Hkv, rep * Tq, d});
  at::Tensor scores = at::matmul(qg, k.transpose(-2, -1)).to(at::kFloat) * (1.0 / std::sqrt(double(d)));
  scores = scores.view({B, Hkv, rep, Tq, Tk}).masked_fill(mask.unsqueeze(1).logical_not(), -INFINITY);
  at::Tensor probs = at::softmax(scores, -1).to(v.scalar_type()).view({B, Hkv, rep * Tq, Tk});
  return at::matmul(probs, v).view({B, Hq, Tq, d});
}

namespace {

at::Tensor window_ok(const at::Tensor& qi, const at::Tensor& kj, int64_t window) {
  at::Tensor ok = kj <= qi;
  if (window > 0) ok = ok & (kj > qi - window);
  return ok;
}

}  // namespace

at::Tensor segment_mask(const at::Tensor& segments, int64_t window) {
  const int64_t T = segments.size(1);
  at::Tensor idx = at::arange(T, segments.options().dtype(at::kLong));
  at::Tensor qi = idx.view({T, 1}), kj = idx.view({1, T});
  at::Tensor causal = window_ok(qi, kj, window).unsqueeze(0);                          // (1, T, T)
  at::Tensor same = segments.unsqueeze(2) == segments.unsqueeze(1);                     // (B, T, T)
  at::Tensor real = (segments > 0).unsqueeze(2);                                       // (B, T, 1)
  at::Tensor diag = at::eye(T, segments.options().dtype(at::kBool)).unsqueeze(0);      // (1, T, T)
  return ((causal & same & real) | diag).unsqueeze(1);
}

at::Tensor cache_mask(const at::Tensor& valid, int64_t first_slot, int64_t n, int64_t window) {
  const int64_t Tk = first_slot + n;
  REALIGN_CHECK(valid.size(1) >= Tk) << valid.sizes() << " " << Tk;
  auto opts = valid.options().dtype(at::kLong);
  at::Tensor qi = at::arange(first_slot, Tk, opts).view({n, 1}), kj = at::arange(Tk, opts).view({1, Tk});
  at::Tensor keys = valid.narrow(1, 0, Tk).unsqueeze(1);                      // (B, 1, Tk)
  at::Tensor ok = window_ok(qi, kj, window).unsqueeze(0) & keys;             // (B, n, Tk)
  at::Tensor self = (qi == kj).unsqueeze(0);                                  // (1, n, Tk)
  at::Tensor pad_query = valid.narrow(1, first_slot, n).logical_not().unsqueeze(2);  // (B, n, 1)
  return at::where(pad_query, self, ok).unsqueeze(1);
}

at::Tensor cache_mask_at(const at::Tensor& valid, const at::Tensor& slots, int64_t window) {
  const int64_t S = valid.size(1), n = slots.size(0);
  at::Tensor qi = slots.view({n, 1}), kj = at::arange(S, slots.options()).view({1, S});
  at::Tensor ok = window_ok(qi, kj, window).unsqueeze(0) & valid.unsqueeze(1);     // (B, n, S)
  at::Tensor self = (qi == kj).unsqueeze(0);                                        // (1, n, S)
  at::Tensor pad_query = valid.index_select(1, slots).logical_not().unsqueeze(2);  // (B, n, 1)
  return at::where(pad_query, self, ok).unsqueeze(1);
}

}  // namespace realign::model
