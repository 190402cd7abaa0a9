#include "cost/layer_gemms.h"

#include "plan/expert_parallel.h"

namespace realign {

std::vector<GemmShape> attention_gemms(const ModelSpec& m, double tokens, int tp_degree) {
  const double h = double(m.hidden), tp = double(tp_degree);
  if (!m.mla.enabled()) {
    const double q = double(m.n_heads * m.head_dim), kv = double(m.n_kv_heads * m.head_dim);
    return {{tokens, (q + 2.0 * kv) / tp, h}, {tokens, h, q / tp}};
  }
  const MlaSpec& a = m.mla;
  const double heads = double(m.n_heads), qk = heads * double(a.qk_head_dim());
  const double ql = double(a.q_lora_rank), kvl = double(a.kv_lora_rank);
  std::vector<GemmShape> g;
  if (ql > 0) {
    g.push_back({tokens, ql, h});        // q_a, whole on every rank
    g.push_back({tokens, qk / tp, ql});  // q_b, by heads
  } else {
    g.push_back({tokens, qk / tp, h});
  }
  g.push_back({tokens, kvl + double(a.qk_rope_head_dim), h});                          // kv_a, whole
  g.push_back({tokens, heads * double(a.qk_nope_head_dim + a.v_head_dim) / tp, kvl});  // kv_b, by heads
  g.push_back({tokens, h, heads * double(a.v_head_dim) / tp});                         // o, row-parallel
  return g;
}

std::vector<GemmShape> dense_mlp_gemms(const ModelSpec& m, double tokens, int tp_degree) {
  const double h = double(m.hidden), inter = double(m.intermediate), tp = double(tp_degree);
  const double mlp_inputs = m.family == ModelFamily::kGpt2 ? 1.0 : 2.0;
  return {{tokens, mlp_inputs * inter / tp, h}, {tokens, h, inter / tp}};
}

std::vector<GemmShape> moe_mlp_gemms(const ModelSpec& m, double tokens, int tp_degree, int ep, double load) {
  const MoeSpec& e = m.moe;
  const double h = double(m.hidden), tp = double(tp_degree);
  const bool cut = experts_cut_by_tp(ep);
  const double ie = double(e.expert_intermediate) / (cut ? tp : 1.0);  // each expert's inner size here
  const double own = cut ? tokens : tokens / tp;                       // tokens this rank routes
  const double local = double(e.num_experts) / double(ep);             // experts this rank holds
  const double per_expert = own * double(e.experts_per_token) * load / local;  // rows of each local expert
  std::vector<GemmShape> g = {
      {own, double(e.num_experts), h}, {per_expert, 2.0 * ie, h, local}, {per_expert, h, ie, local}};
  if (e.shared_experts > 0) {
    const double is = double(e.shared_experts * e.shared_intermediate);
    g.push_back({tokens, 2.0 * is / tp, h});
    g.push_back({tokens, h, is / tp});
  }
  return g;
}

}  // namespace realign
