#include "model/hf_names.h"

#include <ATen/ATen.h>

#include <regex>

#include "core/check.h"
#include "core/error.h"

namespace realign::model {
namespace {

const char* kGpt2Prefix = "transformer.";

// "layers.3.attn.q.weight" -> layer 3, rest "attn.q.weight"; false for non-layer names.
bool split_layer(const std::string& name, int* layer, std::string* rest) {
  static const std::regex re(R"(layers\.(\d+)\.(.+))");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return false;
  *layer = std::stoi(m[1].str());
  *rest = m[2].str();
  return true;
}

// The MoE block of layer `layer` (canonical names after "layers.N."): false when `rest` is not one of its.
bool moe_source(const ModelSpec& spec, int layer, const std::string& rest, HfSource* s) {
  if (rest.rfind("moe.", 0) != 0) return false;
  const bool mixtral = spec.family == ModelFamily::kMixtral;
  const std::string p = "model.layers." + std::to_string(layer) + (mixtral ? ".block_sparse_moe." : ".mlp.");
  static const std::map<std::string, std::pair<const char*, const char*>> experts = {
      {"moe.experts.gate.weight", {"w1", "gate_proj"}},
      {"moe.experts.up.weight", {"w3", "up_proj"}},
      {"moe.experts.down.weight", {"w2", "down_proj"}}};
  static const std::map<std::string, std::string> qwen_shared = {
      {"moe.shared.gate.weight", "shared_expert.gate_proj.weight"},
      {"moe.shared.up.weight", "shared_expert.up_proj.weight"},
      {"moe.shared.down.weight", "shared_expert.down_proj.weight"},
      {"moe.shared_gate.weight", "shared_expert_gate.weight"}};
  if (rest == "moe.router.weight") {
    s->name = p + "gate.weight";
    return true;
  }
  if (auto it = experts.find(rest); it != experts.end()) {
    for (int64_t e = 0; e < spec.moe.num_experts; ++e)
      s->stacked.push_back(p + "experts." + std::to_string(e) + "." +
                           (mixtral ? it->second.first : it->second.second) + ".weight");
    return true;
  }
  if (auto it = qwen_shared.find(rest); it != qwen_shared.end() && spec.family == ModelFamily::kQwen2Moe) {
    s->name = p + it->second;
    return true;
  }
  return false;
}

HfSource llama_source(const ModelSpec& spec, const std::string& c) {
  static const std::map<std::string, std::string> top = {
      {"embed.weight", "model.embed_tokens.weight"}, {"final_norm.weight", "model.norm.weight"},
      {"lm_head.weight", "lm_head.weight"},          {"value_head.weight", "value_head.weight"},
      {"value_head.bias", "value_head.bias"}};
  static const std::map<std::string, std::string> in_layer = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"mlp_norm.weight", "post_attention_layernorm.weight"},
      {"attn.q.weight", "self_attn.q_proj.weight"},
      {"attn.k.weight", "self_attn.k_proj.weight"},
      {"attn.v.weight", "self_attn.v_proj.weight"},
      {"attn.q.bias", "self_attn.q_proj.bias"},
      {"attn.k.bias", "self_attn.k_proj.bias"},
      {"attn.v.bias", "self_attn.v_proj.bias"},
      {"attn.o.weight", "self_attn.o_proj.weight"},
      {"attn.q_norm.weight", "self_attn.q_norm.weight"},
      {"attn.k_norm.weight", "self_attn.k_norm.weight"},
      {"mlp.gate.weight", "mlp.gate_proj.weight"},
      {"mlp.up.weight", "mlp.up_proj.weight"},
      {"mlp.down.weight", "mlp.down_proj.weight"}};
  HfSource s;
  if (auto it = top.find(c); it != top.end()) {
    s.name = it->second;
    return s;
  }
  int layer = 0;
  std::string rest;
  if (split_layer(c, &layer, &rest)) {
    if (moe_source(spec, layer, rest, &s)) return s;
    if (auto it = in_layer.find(rest); it != in_layer.end()) {
      s.name = "model.layers." + std::to_string(layer) + "." + it->second;
      return s;
    }
  }
  throw Error(c, "not a parameter of " + to_string(spec.family));
}

HfSource gpt2_source(const std::string& c) {
  static const std::map<std::string, std::string> top = {
      {"embed.weight", "wte.weight"},     {"pos_embed.weight", "wpe.weight"},
      {"final_norm.weight", "ln_f.weight"}, {"final_norm.bias", "ln_f.bias"}};
  HfSource s;
  if (auto it = top.find(c); it != top.end()) {
    s.name = kGpt2Prefix + it->second;
    return s;
  }
  if (c == "value_head.weight" || c == "value_head.bias") {
    s.name = c;
    return s;
  }
  int layer = 0;
  std::string rest;
  if (split_layer(c, &layer, &rest)) {
    const std::string p = std::string(kGpt2Prefix) + "h." + std::to_string(layer) + ".";
    static const std::map<std::string, std::pair<std::string, bool>> plain = {
        {"attn_norm.weight", {"ln_1.weight", false}},     {"attn_norm.bias", {"ln_1.bias", false}},
        {"mlp_norm.weight", {"ln_2.weight", false}},      {"mlp_norm.bias", {"ln_2.bias", false}},
        {"attn.o.weight", {"attn.c_proj.weight", true}},  {"attn.o.bias", {"attn.c_proj.bias", false}},
        {"mlp.up.weight", {"mlp.c_fc.weight", true}},     {"mlp.up.bias", {"mlp.c_fc.bias", false}},
        {"mlp.down.weight", {"mlp.c_proj.weight", true}}, {"mlp.down.bias", {"mlp.c_proj.bias", false}}};
    if (auto it = plain.find(rest); it != plain.end()) {
      s.name = p + it->second.first;
      s.transpose = it->second.second;
      return s;
    }
    static const std::map<std::string, int> fused = {{"q", 0}, {"k", 1}, {"v", 2}};
    static const std::regex qkv(R"(attn\.([qkv])\.(weight|bias))");
    std::smatch m;
    if (std::regex_match(rest, m, qkv)) {
      const bool weight = m[2].str() == "weight";
      s.name = p + "attn.c_attn." + m[2].str();
      s.transpose = weight;
      s.fused_part = fused.at(m[1].str());
      s.fused_parts = 3;
      return s;
    }
  }
  throw Error(c, "not a parameter of GPT-2");
}

}  // namespace

HfSource hf_source(const ModelSpec& spec, const std::string& canonical) {
  return spec.family == ModelFamily::kGpt2 ? gpt2_source(canonical) : llama_source(spec, canonical);
}

at::Tensor canonical_from_hf(const HfSource& s, const at::Tensor& hf) {
  at::Tensor t = s.transpose ? hf.t() : hf;
  if (s.fused_part >= 0) {
    REALIGN_CHECK(t.size(0) % s.fused_parts == 0) << s.name << " " << t.sizes();
    const int64_t n = t.size(0) / s.fused_parts;
    t = t.narrow(0, s.fused_part * n, n);
  }
  return t;
}

std::map<std::string, at::Tensor> to_hf_tensors(const ModelSpec& spec,
                                                const std::map<std::string, at::Tensor>& canonical) {
  std::map<std::string, at::Tensor> out;
  std::map<std::string, std::vector<at::Tensor>> fused;  // HF name -> parts in order
  for (const auto& [name, tensor] : canonical) {
    const HfSource s = hf_source(spec, name);
    if (!s.stacked.empty()) {
      REALIGN_CHECK(tensor.size(0) == int64_t(s.stacked.size())) << name << " " << tensor.sizes();
      for (size_t e = 0; e < s.stacked.size(); ++e) out[s.stacked[e]] = tensor[int64_t(e)];
      continue;
    }
    if (s.fused_part < 0) {
      out[s.name] = s.transpose ? tensor.t().contiguous() : tensor;
      continue;
    }
    auto& parts = fused[s.name];
    parts.resize(s.fused_parts);
    parts[s.fused_part] = tensor;
  }
  for (auto& [hf_name, parts] : fused) {
    for (size_t i = 0; i < parts.size(); ++i)
      if (!parts[i].defined()) throw Error(hf_name, "fused tensor lacks part " + std::to_string(i) + " of q, k, v");
    at::Tensor cat = at::cat(parts, 0);  // canonical layout (3H, H) / (3H)
    out[hf_name] = cat.dim() == 2 ? cat.t().contiguous() : cat;
  }
  return out;
}

std::string strip_gpt2_prefix(const std::string& hf_name) {
  const std::string p = kGpt2Prefix;
  return hf_name.compare(0, p.size(), p) == 0 ? hf_name.substr(p.size()) : hf_name;
}

}  // namespace realign::model
