#include "cost/context_parallel.h"

#include <algorithm>

#include "cost/memory_model.h"
#include "cost/moe_cost.h"

namespace realign {

namespace {

// Per token and head slice held by a rank: query, key and value elements (heads / tp each side).
struct HeadElements {
  double q = 0, k = 0, v = 0;
};

HeadElements head_elements(const ModelSpec& m, int tp, int kv_heads_at_least = 1) {
  const double t = double(tp);
  if (m.mla.enabled()) {
    const double heads = double(m.n_heads) / t;
    return {heads * double(m.mla.qk_head_dim()), heads * double(m.mla.qk_head_dim()),
            heads * double(m.mla.v_head_dim)};
  }
  const double kv = std::max(double(kv_heads_at_least), double(m.n_kv_heads) / t);
  const double hd = double(m.head_dim);
  return {double(m.n_heads) / t * hd, kv * hd, kv * hd};
}

}  // namespace

double ring_kv_bytes_per_token(const ModelSpec& m, int tp) {
  const HeadElements e = head_elements(m, tp);
  return (e.k + e.v) * kActivationBytes;
}

double ring_exposed_s(double kv_bytes, double attention_s, int cp, const Link& link, bool backward) {
  if (cp <= 1) return 0;
  const double step = p2p_s((backward ? 2.0 : 1.0) * kv_bytes, link);
  return double(cp - 1) * std::max(0.0, step - attention_s / double(cp));
}

double ulysses_layer_s(const ModelSpec& m, double tokens, int tp, int cp, int devices_per_node,
                       const Link& intra, const Link& inter) {
  if (cp <= 1) return 0;
  const HeadElements e = head_elements(m, tp, cp);
  const int per_node = std::max(1, devices_per_node / std::max(1, tp));
  auto a2a = [&](double elements) {
    return alltoall_s(tokens * elements * kActivationBytes, cp, 1.0, per_node, intra, inter);
  };
  // q, k and v in; the output (as many elements as v's per head, every head) back.
  const double out = m.mla.enabled() ? e.v : e.q;
  return a2a(e.q) + a2a(e.k) + a2a(e.v) + a2a(out);
}

}  // namespace realign
