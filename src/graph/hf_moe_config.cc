#include "graph/hf_moe_config.h"

#include <algorithm>
#include <vector>

#include "graph/hf_fields.h"

namespace realign::hf {
namespace {

// Substrings that mark a key as a mixture-of-experts or latent-attention field (of any family, HF's or a
// fork's): such a key must be one the family's HF configuration defines.
const char* const kMoeMarkers[] = {"expert",        "moe",      "router",    "topk",    "top_k",  "scoring",
                                   "n_group",       "routed",   "lora_rank", "nextn",   "sparse", "mlp_only",
                                   "first_k_dense", "aux_loss", "head_dim",  "seq_aux", "ep_size"};

bool looks_moe(const std::string& key) {
  if (key == "head_dim") return false;  // every family's plain attention field
  for (const char* m : kMoeMarkers)
    if (key.find(m) != std::string::npos) return true;
  return false;
}

// The MoE fields each family's HF configuration class defines (transformers' configuration_<type>.py).
// Router training settings (aux-loss coefficients, router logits output, jitter) are accepted: they change
// neither the shape nor what a step computes.
std::vector<std::string> known_fields(ModelFamily f) {
  switch (f) {
    case ModelFamily::kMixtral:
      return {"num_local_experts", "num_experts_per_tok", "router_aux_loss_coef", "output_router_logits",
              "router_jitter_noise"};
    case ModelFamily::kGptOss:  // GptOssConfig; experts_per_token is openai's own spelling of the top-k
      return {"num_local_experts", "num_experts_per_tok", "experts_per_token", "router_aux_loss_coef",
              "output_router_logits"};
    case ModelFamily::kQwen2Moe:
      return {"num_experts",           "num_experts_per_tok",
              "moe_intermediate_size", "shared_expert_intermediate_size",
              "decoder_sparse_step",   "mlp_only_layers",
              "norm_topk_prob",        "router_aux_loss_coef",
              "output_router_logits"};
    case ModelFamily::kQwen3Moe:
      return {"num_experts",     "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step",
              "mlp_only_layers", "norm_topk_prob",      "router_aux_loss_coef",  "output_router_logits"};
    case ModelFamily::kDeepseekV2:  // DeepseekV2Config defines the same fields as V3's
    case ModelFamily::kDeepseekV3:
      return {"n_routed_experts",
              "num_experts_per_tok",
              "moe_intermediate_size",
              "n_shared_experts",
              "first_k_dense_replace",
              "moe_layer_freq",
              "n_group",
              "topk_group",
              "topk_method",
              "scoring_func",
              "norm_topk_prob",
              "routed_scaling_factor",
              "q_lora_rank",
              "kv_lora_rank",
              "qk_nope_head_dim",
              "qk_rope_head_dim",
              "v_head_dim",
              "num_nextn_predict_layers",
              "aux_loss_alpha",
              "seq_aux",
              "ep_size",
              "rope_interleave"};
    default:
      return {};
  }
}

void refuse_unknown(const Json& c, const std::string& path, ModelFamily f) {
  const std::vector<std::string> known = known_fields(f);
  for (auto it = c.begin(); it != c.end(); ++it) {
    if (!looks_moe(it.key()) || std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Error(path + ": " + it.key(),
                "not a mixture-of-experts field of " + to_string(f) + " (" + list + ")");
  }
}

std::vector<int64_t> int_list(const Json& c, const char* key, const std::string& path) {
  std::vector<int64_t> out;
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return out;
  if (!it->is_array()) throw Error(path + ": " + key, "expected a list of layer indices");
  for (size_t i = 0; i < it->size(); ++i)
    out.push_back(json_to_int((*it)[i], path + ": " + key + "[" + std::to_string(i) + "]"));
  return out;
}

// DeepSeek-V2 and V3 share the latent attention and the dense-then-MoE layer plan; they differ in routing:
// V2 scores by softmax and picks the top-k (topk_method greedy, DeepSeek-V2-Lite) or the top-k within the
// best topk_group of n_group groups (group_limited_greedy, DeepSeek-V2), with no selection bias; V3 scores by
// sigmoid with a selection bias (noaux_tc).
void read_deepseek(const Json& c, const std::string& path, ModelSpec& s) {
  const bool v2 = s.family == ModelFamily::kDeepseekV2;
  MoeSpec& m = s.moe;
  m.num_experts = get_int(c, "n_routed_experts", path);
  m.expert_intermediate = get_int(c, "moe_intermediate_size", path);
  m.shared_experts = get_int_or(c, "n_shared_experts", 0, path);
  m.shared_intermediate = m.expert_intermediate;  // HF: DeepseekV3MLP(intermediate = moe x n_shared)
  m.first_dense_layers = get_int_or(c, "first_k_dense_replace", 0, path);
  if (const int64_t freq = get_int_or(c, "moe_layer_freq", 1, path); freq != 1)
    throw Error(path + ": moe_layer_freq", std::to_string(freq) +
                                               " is not supported: HF's DeepSeek-V3 makes every layer from "
                                               "first_k_dense_replace on an MoE layer (1)");
  const std::string scoring = get_string_or(c, "scoring_func", v2 ? "softmax" : "sigmoid", path);
  if (scoring != (v2 ? "softmax" : "sigmoid"))
    throw Error(
        path + ": scoring_func",
        "router scoring '" + scoring +
            (v2 ? "' is not DeepSeek-V2's (softmax; sigmoid is DeepSeek-V3's, model_type deepseek_v3)"
                : "' is not DeepSeek-V3's (sigmoid; softmax is DeepSeek-V2's, model_type deepseek_v2)"));
  const std::string method = get_string_or(c, "topk_method", v2 ? "greedy" : "noaux_tc", path);
  if (v2 && method != "greedy" && method != "group_limited_greedy")
    throw Error(path + ": topk_method", "router type '" + method +
                                            "' is not supported (DeepSeek-V2 routes by greedy or "
                                            "group_limited_greedy)");
  if (!v2 && method != "noaux_tc")
    throw Error(path + ": topk_method",
                "router type '" + method +
                    "' is not supported (DeepSeek-V3 routes by noaux_tc: grouped top-k "
                    "with a selection bias)");
  m.scoring = v2 ? RouterScoring::kSoftmax : RouterScoring::kSigmoid;
  m.selection_bias = !v2;
  // greedy picks from every expert: n_group and topk_group do not apply.
  const bool grouped = !v2 || method == "group_limited_greedy";
  m.groups = grouped ? get_int_or(c, "n_group", 1, path) : 1;
  m.top_groups = grouped ? get_int_or(c, "topk_group", 1, path) : 1;
  // DeepseekV2Config defaults norm_topk_prob to False (the published V2 configs say false), V3's to True.
  m.normalize_top_k = get_bool_or(c, "norm_topk_prob", !v2, path);
  m.routed_scaling = get_double_or(c, "routed_scaling_factor", 1.0, path);
  s.mla.q_lora_rank = get_int_or(c, "q_lora_rank", 0, path);  // null: queries projected directly
  s.mla.kv_lora_rank = get_int(c, "kv_lora_rank", path);
  s.mla.qk_nope_head_dim = get_int(c, "qk_nope_head_dim", path);
  s.mla.qk_rope_head_dim = get_int(c, "qk_rope_head_dim", path);
  s.mla.v_head_dim = get_int(c, "v_head_dim", path);
  if (s.mla.kv_lora_rank <= 0) throw Error(path + ": kv_lora_rank", "must be positive");
  s.head_dim = s.mla.qk_head_dim();
  s.n_kv_heads = s.n_heads;  // every head has its own key and value, decompressed from the latent
}

}  // namespace

bool is_moe_family(ModelFamily f) {
  return f == ModelFamily::kMixtral || f == ModelFamily::kQwen2Moe || f == ModelFamily::kQwen3Moe ||
         f == ModelFamily::kDeepseekV2 || f == ModelFamily::kDeepseekV3 || f == ModelFamily::kGptOss;
}

void read_moe_fields(const Json& c, const std::string& path, ModelSpec& s) {
  refuse_unknown(c, path, s.family);
  MoeSpec& m = s.moe;
  m.experts_per_token = s.family == ModelFamily::kGptOss && !c.contains("num_experts_per_tok")
                            ? get_int(c, "experts_per_token", path)
                            : get_int(c, "num_experts_per_tok", path);
  switch (s.family) {
    case ModelFamily::kGptOss:   // every layer; softmax over the top-k logits (GptOssTopKRouter), as Mixtral
    case ModelFamily::kMixtral:  // every layer; softmax top-k, always renormalised (MixtralSparseMoeBlock)
      m.num_experts = get_int(c, "num_local_experts", path);
      m.expert_intermediate = s.intermediate;
      m.normalize_top_k = true;
      break;
    case ModelFamily::kQwen2Moe:
    case ModelFamily::kQwen3Moe:
      m.num_experts = get_int(c, "num_experts", path);
      m.expert_intermediate = get_int(c, "moe_intermediate_size", path);
      m.sparse_step = get_int_or(c, "decoder_sparse_step", 1, path);
      m.dense_layers = int_list(c, "mlp_only_layers", path);
      // transformers' Qwen2MoeConfig and Qwen3MoeConfig both default norm_topk_prob to False; the published
      // Qwen3-MoE checkpoints set it true in their config.json.
      m.normalize_top_k = get_bool_or(c, "norm_topk_prob", false, path);
      if (s.family == ModelFamily::kQwen2Moe) {  // one shared expert behind a sigmoid gate
        m.shared_intermediate = get_int_or(c, "shared_expert_intermediate_size", 0, path);
        m.shared_experts = m.shared_intermediate > 0 ? 1 : 0;
        m.shared_expert_gate = m.shared_experts > 0;
      } else {
        s.qk_norm = true;
      }
      break;
    case ModelFamily::kDeepseekV2:
    case ModelFamily::kDeepseekV3:
      read_deepseek(c, path, s);
      break;
    default:
      break;
  }
  if (m.num_experts <= 0)
    throw Error(path, "a " + to_string(s.family) + " config needs a positive expert count");
  if (m.sparse_step <= 0) throw Error(path + ": decoder_sparse_step", "must be positive");
  if (m.experts_per_token <= 0 || m.experts_per_token > m.num_experts)
    throw Error(path + ": num_experts_per_tok", std::to_string(m.experts_per_token) +
                                                    " is not between 1 and the " +
                                                    std::to_string(m.num_experts) + " experts");
}

void refuse_moe_fields(const Json& c, const std::string& path, ModelFamily family) {
  if (!c.is_object()) return;
  for (const char* key : {"num_experts", "num_local_experts", "n_routed_experts", "num_experts_per_tok",
                          "moe_intermediate_size", "n_shared_experts"})
    if (c.contains(key) && !c.at(key).is_null())
      throw Error(path + ": " + key, to_string(family) +
                                         " has no mixture-of-experts layers; model_type mixtral, qwen2_moe, "
                                         "qwen3_moe, deepseek_v2, deepseek_v3 or gpt_oss has");
}

void write_moe_fields(const ModelSpec& s, Json& c) {
  const MoeSpec& m = s.moe;
  c["num_experts_per_tok"] = m.experts_per_token;
  switch (s.family) {
    case ModelFamily::kMixtral:
    case ModelFamily::kGptOss:
      c["num_local_experts"] = m.num_experts;
      break;
    case ModelFamily::kQwen2Moe:
    case ModelFamily::kQwen3Moe:
      c["num_experts"] = m.num_experts;
      c["moe_intermediate_size"] = m.expert_intermediate;
      c["decoder_sparse_step"] = m.sparse_step;
      c["mlp_only_layers"] = m.dense_layers;
      c["norm_topk_prob"] = m.normalize_top_k;
      if (s.family == ModelFamily::kQwen2Moe) c["shared_expert_intermediate_size"] = m.shared_intermediate;
      break;
    case ModelFamily::kDeepseekV2:
    case ModelFamily::kDeepseekV3:
      c.erase("head_dim");
      c["n_routed_experts"] = m.num_experts;
      c["moe_intermediate_size"] = m.expert_intermediate;
      c["n_shared_experts"] = m.shared_experts;
      c["first_k_dense_replace"] = m.first_dense_layers;
      c["moe_layer_freq"] = 1;
      c["scoring_func"] = m.scoring == RouterScoring::kSoftmax ? "softmax" : "sigmoid";
      c["topk_method"] = s.family == ModelFamily::kDeepseekV3 ? "noaux_tc"
                         : m.groups > 1                       ? "group_limited_greedy"
                                                              : "greedy";
      c["n_group"] = m.groups;
      c["topk_group"] = m.top_groups;
      c["norm_topk_prob"] = m.normalize_top_k;
      c["routed_scaling_factor"] = m.routed_scaling;
      c["q_lora_rank"] = s.mla.q_lora_rank > 0 ? Json(s.mla.q_lora_rank) : Json(nullptr);
      c["kv_lora_rank"] = s.mla.kv_lora_rank;
      c["qk_nope_head_dim"] = s.mla.qk_nope_head_dim;
      c["qk_rope_head_dim"] = s.mla.qk_rope_head_dim;
      c["v_head_dim"] = s.mla.v_head_dim;
      break;
    default:
      break;
  }
}

}  // namespace realign::hf
