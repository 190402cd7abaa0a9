#include "graph/moe_spec.h"

#include <algorithm>
#include <cstdio>

namespace realign {

bool MoeSpec::is_moe_layer(int64_t layer) const {
  if (!enabled() || layer < first_dense_layers || (layer + 1) % sparse_step != 0) return false;
  return std::find(dense_layers.begin(), dense_layers.end(), layer) == dense_layers.end();
}

int64_t MoeSpec::moe_layers_in(int64_t begin, int64_t end) const {
  int64_t n = 0;
  for (int64_t l = begin; l < end; ++l) n += is_moe_layer(l) ? 1 : 0;
  return n;
}

bool MoeSpec::operator==(const MoeSpec& o) const {
  return num_experts == o.num_experts && experts_per_token == o.experts_per_token &&
         expert_intermediate == o.expert_intermediate && shared_experts == o.shared_experts &&
         shared_intermediate == o.shared_intermediate && shared_expert_gate == o.shared_expert_gate &&
         first_dense_layers == o.first_dense_layers && sparse_step == o.sparse_step &&
         dense_layers == o.dense_layers && scoring == o.scoring && normalize_top_k == o.normalize_top_k &&
         groups == o.groups && top_groups == o.top_groups && selection_bias == o.selection_bias &&
         routed_scaling == o.routed_scaling;
}

bool MlaSpec::operator==(const MlaSpec& o) const {
  return q_lora_rank == o.q_lora_rank && kv_lora_rank == o.kv_lora_rank &&
         qk_nope_head_dim == o.qk_nope_head_dim && qk_rope_head_dim == o.qk_rope_head_dim &&
         v_head_dim == o.v_head_dim;
}

std::string describe_router(const MoeSpec& m) {
  if (!m.enabled()) return "dense";
  std::string out = m.scoring == RouterScoring::kSoftmax ? "softmax" : "sigmoid";
  if (m.selection_bias) out += " + bias";
  out += ", top-" + std::to_string(m.experts_per_token) + " of " + std::to_string(m.num_experts);
  if (m.groups > 1)
    out += " in the best " + std::to_string(m.top_groups) + " of " + std::to_string(m.groups) + " groups";
  if (m.normalize_top_k) out += ", renormalised";
  if (m.routed_scaling != 1.0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ", x%g", m.routed_scaling);
    out += buf;
  }
  return out;
}

}  // namespace realign
