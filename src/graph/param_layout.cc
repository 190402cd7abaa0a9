#include "graph/param_layout.h"

#include "core/check.h"

namespace realign {

int64_t ParamInfo::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool ParamInfo::operator==(const ParamInfo& o) const {
  return name == o.name && shape == o.shape && layer == o.layer && tied_to_head == o.tied_to_head &&
         split_dim == o.split_dim && split_unit == o.split_unit && expert == o.expert;
}

namespace {

ParamInfo param(std::string name, std::vector<int64_t> shape, int layer, int split_dim = -1,
                int64_t unit = 1) {
  ParamInfo p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.layer = layer;
  p.split_dim = split_dim;
  p.split_unit = unit;
  return p;
}

// Multi-head latent attention (DeepSeek-V3): the per-head projections split over tp by heads; the latents
// and their norms are replicated.
void add_mla(const ModelSpec& s, const std::string& p, int i, std::vector<ParamInfo>& out) {
  const MlaSpec& m = s.mla;
  const int64_t H = s.hidden, qk = m.qk_head_dim(), kv_unit = m.qk_nope_head_dim + m.v_head_dim;
  if (m.q_lora_rank > 0) {
    out.push_back(param(p + "attn.q_a.weight", {m.q_lora_rank, H}, i));
    out.push_back(param(p + "attn.q_a_norm.weight", {m.q_lora_rank}, i));
    out.push_back(param(p + "attn.q_b.weight", {s.n_heads * qk, m.q_lora_rank}, i, 0, qk));
  } else {
    out.push_back(param(p + "attn.q.weight", {s.n_heads * qk, H}, i, 0, qk));
  }
  out.push_back(param(p + "attn.kv_a.weight", {m.kv_lora_rank + m.qk_rope_head_dim, H}, i));
  out.push_back(param(p + "attn.kv_a_norm.weight", {m.kv_lora_rank}, i));
  out.push_back(param(p + "attn.kv_b.weight", {s.n_heads * kv_unit, m.kv_lora_rank}, i, 0, kv_unit));
  out.push_back(param(p + "attn.o.weight", {H, s.n_heads * m.v_head_dim}, i, 1, m.v_head_dim));
}

// A mixture-of-experts MLP: router (replicated), routed experts (split over ep), shared experts (split over
// tp like a dense MLP).
void add_moe(const ModelSpec& s, const std::string& p, int i, std::vector<ParamInfo>& out) {
  const MoeSpec& m = s.moe;
  const int64_t H = s.hidden, E = m.num_experts, I = m.expert_intermediate;
  out.push_back(param(p + "moe.router.weight", {E, H}, i));
  if (m.selection_bias) out.push_back(param(p + "moe.router.bias", {E}, i));
  for (const char* name : {"gate", "up", "down"}) {
    const bool down = std::string(name) == "down";
    ParamInfo e =
        param(p + "moe.experts." + name + ".weight",
              down ? std::vector<int64_t>{E, H, I} : std::vector<int64_t>{E, I, H}, i, down ? 2 : 1);
    e.expert = true;
    out.push_back(e);
  }
  if (m.shared_experts > 0) {
    const int64_t Is = m.shared_experts * m.shared_intermediate;
    out.push_back(param(p + "moe.shared.gate.weight", {Is, H}, i, 0));
    out.push_back(param(p + "moe.shared.up.weight", {Is, H}, i, 0));
    out.push_back(param(p + "moe.shared.down.weight", {H, Is}, i, 1));
    if (m.shared_expert_gate) out.push_back(param(p + "moe.shared_gate.weight", {1, H}, i));
  }
}

}  // namespace

std::vector<ParamInfo> model_params(const ModelSpec& s, HeadKind head) {
  const bool gpt2 = s.family == ModelFamily::kGpt2;
  const int64_t H = s.hidden, hd = s.head_dim, q = s.n_heads * hd, kv = s.n_kv_heads * hd, I = s.intermediate;
  std::vector<ParamInfo> out;
  ParamInfo embed = param("embed.weight", {s.vocab, H}, ParamInfo::kEmbedding, 0);
  embed.tied_to_head = s.tied_embeddings && head == HeadKind::kLanguageModel;
  out.push_back(embed);
  if (gpt2) out.push_back(param("pos_embed.weight", {s.max_positions, H}, ParamInfo::kEmbedding));
  for (int i = 0; i < int(s.n_layers); ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    out.push_back(param(p + "attn_norm.weight", {H}, i));
    if (gpt2) out.push_back(param(p + "attn_norm.bias", {H}, i));
    if (s.mla.enabled()) {
      add_mla(s, p, i, out);
    } else {
      const char* names[] = {"q", "k", "v"};
      const int64_t rows[] = {q, kv, kv};
      for (int j = 0; j < 3; ++j) {
        out.push_back(param(p + "attn." + names[j] + ".weight", {rows[j], H}, i, 0, hd));
        if (s.qkv_bias) out.push_back(param(p + "attn." + names[j] + ".bias", {rows[j]}, i, 0, hd));
      }
      if (s.qk_norm) {
        out.push_back(param(p + "attn.q_norm.weight", {hd}, i));
        out.push_back(param(p + "attn.k_norm.weight", {hd}, i));
      }
      out.push_back(param(p + "attn.o.weight", {H, q}, i, 1, hd));
    }
    if (gpt2) out.push_back(param(p + "attn.o.bias", {H}, i));
    if (s.post_norms()) out.push_back(param(p + "attn_post_norm.weight", {H}, i));
    out.push_back(param(p + "mlp_norm.weight", {H}, i));
    if (gpt2) out.push_back(param(p + "mlp_norm.bias", {H}, i));
    if (s.moe.is_moe_layer(i)) {
      add_moe(s, p, i, out);
      continue;
    }
    if (!gpt2) out.push_back(param(p + "mlp.gate.weight", {I, H}, i, 0));
    out.push_back(param(p + "mlp.up.weight", {I, H}, i, 0));
    if (gpt2) out.push_back(param(p + "mlp.up.bias", {I}, i, 0));
    out.push_back(param(p + "mlp.down.weight", {H, I}, i, 1));
    if (gpt2) out.push_back(param(p + "mlp.down.bias", {H}, i));
    if (s.post_norms()) out.push_back(param(p + "mlp_post_norm.weight", {H}, i));
  }
  out.push_back(param("final_norm.weight", {H}, ParamInfo::kHead));
  if (gpt2) out.push_back(param("final_norm.bias", {H}, ParamInfo::kHead));
  if (head == HeadKind::kValue) {
    out.push_back(param("value_head.weight", {1, H}, ParamInfo::kHead));
    out.push_back(param("value_head.bias", {1}, ParamInfo::kHead));
  } else if (!s.tied_embeddings) {
    out.push_back(param("lm_head.weight", {s.vocab, H}, ParamInfo::kHead, 0));
  }
  return out;
}

Range intersect(const Range& a, const Range& b) {
  Range r{std::max(a.begin, b.begin), std::min(a.end, b.end)};
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

Range balanced_part(int64_t units, int part, int parts) {
  REALIGN_CHECK(parts > 0 && part >= 0 && part < parts) << part << "/" << parts;
  return Range{units * part / parts, units * (part + 1) / parts};
}

Range tp_shard_range(const ParamInfo& p, int tp_rank, int tp_size) {
  if (p.split_dim < 0) return Range{0, p.shape.at(0)};
  const int64_t extent = p.shape.at(p.split_dim);
  REALIGN_CHECK(extent % p.split_unit == 0) << p.name;
  const Range units = balanced_part(extent / p.split_unit, tp_rank, tp_size);
  return Range{units.begin * p.split_unit, units.end * p.split_unit};
}

std::vector<int64_t> tp_shard_shape(const ParamInfo& p, int tp_rank, int tp_size) {
  std::vector<int64_t> shape = p.shape;
  if (p.split_dim >= 0) shape[p.split_dim] = tp_shard_range(p, tp_rank, tp_size).size();
  return shape;
}

Range ep_shard_range(const ParamInfo& p, int ep_rank, int ep) {
  if (!p.expert) return Range{0, p.shape.at(0)};
  return balanced_part(p.shape.at(0), ep_rank, ep);
}

Range stage_layers(int64_t n_layers, int stage, int pp) { return balanced_part(n_layers, stage, pp); }

bool stage_holds(const ParamInfo& p, int stage, int pp, int64_t n_layers) {
  if (p.layer == ParamInfo::kEmbedding) return stage == 0 || (p.tied_to_head && stage == pp - 1);
  if (p.layer == ParamInfo::kHead) return stage == pp - 1;
  const Range r = stage_layers(n_layers, stage, pp);
  return p.layer >= r.begin && p.layer < r.end;
}

std::string tp_incompatibility(const ModelSpec& s, int tp, bool replicate_kv_heads) {
  if (tp <= 0) return "tensor-parallel degree must be positive";
  if (s.n_heads % tp != 0)
    return "tp " + std::to_string(tp) + " does not divide " + std::to_string(s.n_heads) + " attention heads";
  if (replicate_kv_heads && tp > s.n_kv_heads) {
    if (tp % s.n_kv_heads != 0)
      return "tp " + std::to_string(tp) + " is not a multiple of " + std::to_string(s.n_kv_heads) +
             " KV heads (a serving engine replicates them over the ranks)";
    return "";
  }
  if (s.n_kv_heads % tp != 0)
    return "tp " + std::to_string(tp) + " does not divide " + std::to_string(s.n_kv_heads) + " KV heads";
  return "";
}

}  // namespace realign
