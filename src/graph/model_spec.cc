#include "graph/model_spec.h"

#include <algorithm>

namespace realign {

namespace {
struct FamilyName {
  ModelFamily family;
  const char* name;
};
constexpr FamilyName kFamilies[] = {
    {ModelFamily::kLlama, "llama"},
    {ModelFamily::kQwen2, "qwen2"},
    {ModelFamily::kQwen3, "qwen3"},
    {ModelFamily::kMistral, "mistral"},
    {ModelFamily::kGpt2, "gpt2"},
    {ModelFamily::kMixtral, "mixtral"},
    {ModelFamily::kQwen2Moe, "qwen2_moe"},
    {ModelFamily::kQwen3Moe, "qwen3_moe"},
    {ModelFamily::kDeepseekV3, "deepseek_v3"},
    {ModelFamily::kDeepseekV2, "deepseek_v2"},
    {ModelFamily::kGemma2, "gemma2"},
    {ModelFamily::kGemma3, "gemma3_text"},
    {ModelFamily::kGptOss, "gpt_oss"},
};
}  // namespace

std::string to_string(ModelFamily family) {
  for (const auto& f : kFamilies)
    if (f.family == family) return f.name;
  return "?";
}

ModelFamily model_family_from_string(const std::string& name, const std::string& path) {
  std::string known;
  for (const auto& f : kFamilies) {
    if (name == f.name) return f.family;
    known += (known.empty() ? "" : ", ") + std::string(f.name);
  }
  throw Error(path, "unknown architecture '" + name + "'; supported: " + known);
}

bool RopeScaling::operator==(const RopeScaling& o) const {
  return type == o.type && factor == o.factor && low_freq_factor == o.low_freq_factor &&
         high_freq_factor == o.high_freq_factor && original_max_position == o.original_max_position;
}

int64_t ModelSpec::attention_params() const {
  const int64_t q = n_heads * head_dim, kv = n_kv_heads * head_dim;
  if (family == ModelFamily::kGpt2)  // c_attn (h -> 3h) + c_proj (h -> h), biased; two LayerNorms
    return hidden * (q + 2 * kv) + (q + 2 * kv) + q * hidden + hidden + 4 * hidden;
  const int64_t norms = (post_norms() ? 4 : 2) * hidden + (qk_norm ? 2 * head_dim : 0);
  if (mla.enabled()) {
    const int64_t qk = n_heads * mla.qk_head_dim();
    const int64_t q_path =
        mla.q_lora_rank > 0 ? hidden * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * qk : hidden * qk;
    const int64_t kv_path = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank +
                            mla.kv_lora_rank * n_heads * (mla.qk_nope_head_dim + mla.v_head_dim);
    return q_path + kv_path + n_heads * mla.v_head_dim * hidden + norms;
  }
  return hidden * (q + 2 * kv) + q * hidden + (qkv_bias ? q + 2 * kv : 0) + norms;
}

namespace {
// The MLP parameters of a layer with `routed` routed experts counted (all of them, or the k a token uses).
int64_t moe_mlp_params(const ModelSpec& s, int64_t routed) {
  const MoeSpec& m = s.moe;
  const int64_t router = m.num_experts * s.hidden + (m.selection_bias ? m.num_experts : 0);
  return router + routed * 3 * s.hidden * m.expert_intermediate +
         m.shared_experts * 3 * s.hidden * m.shared_intermediate + (m.shared_expert_gate ? s.hidden : 0);
}
}  // namespace

int64_t ModelSpec::mlp_params(int64_t layer) const {
  if (family == ModelFamily::kGpt2)  // c_fc (h -> 4h) + c_proj (4h -> h), biased
    return 2 * hidden * intermediate + intermediate + hidden;
  if (moe.is_moe_layer(layer)) return moe_mlp_params(*this, moe.num_experts);
  return 3 * hidden * intermediate;  // SwiGLU: gate, up, down
}

int64_t ModelSpec::active_mlp_params(int64_t layer) const {
  return moe.is_moe_layer(layer) ? moe_mlp_params(*this, moe.experts_per_token) : mlp_params(layer);
}

int64_t ModelSpec::layer_params(int64_t layer) const { return attention_params() + mlp_params(layer); }

int64_t ModelSpec::params_per_layer() const { return layer_params(0); }

int64_t ModelSpec::embedding_params() const {
  return vocab * hidden + (family == ModelFamily::kGpt2 ? max_positions * hidden : 0);
}

int64_t ModelSpec::head_params() const {
  const int64_t final_norm = family == ModelFamily::kGpt2 ? 2 * hidden : hidden;
  return final_norm + (tied_embeddings ? 0 : vocab * hidden);
}

int64_t ModelSpec::total_params() const {
  if (!is_moe()) return n_layers * params_per_layer() + embedding_params() + head_params();
  int64_t n = embedding_params() + head_params();
  for (int64_t l = 0; l < n_layers; ++l) n += layer_params(l);
  return n;
}

int64_t ModelSpec::active_params() const {
  if (!is_moe()) return total_params();
  int64_t n = embedding_params() + head_params();
  for (int64_t l = 0; l < n_layers; ++l) n += attention_params() + active_mlp_params(l);
  return n;
}

bool ModelSpec::sliding_layer(int64_t layer) const {
  if (sliding_window <= 0) return false;
  return sliding_window_pattern <= 0 || (layer + 1) % sliding_window_pattern != 0;
}

double ModelSpec::attended_tokens(int64_t begin, int64_t end, double context) const {
  if (sliding_window <= 0) return double(end - begin) * context;
  double n = 0;
  for (int64_t l = begin; l < end; ++l)
    n += sliding_layer(l) ? std::min(context, double(sliding_window)) : context;
  return n;
}

double ModelSpec::forward_flops(double tokens, double context) const {
  const double h = double(hidden), inter = double(intermediate);
  double attn_matmul, attention;  // multiply-adds per token and layer; attention's per token of context
  if (mla.enabled()) {
    const double heads = double(n_heads), qk = heads * double(mla.qk_head_dim());
    const double ql = double(mla.q_lora_rank), kvl = double(mla.kv_lora_rank);
    attn_matmul = (ql > 0 ? h * ql + ql * qk : h * qk) + h * (kvl + double(mla.qk_rope_head_dim)) +
                  kvl * heads * double(mla.qk_nope_head_dim + mla.v_head_dim) +
                  heads * double(mla.v_head_dim) * h;
    attention = qk + heads * double(mla.v_head_dim);
  } else {
    const double q = double(n_heads * head_dim), kv = double(n_kv_heads * head_dim);
    attn_matmul = h * (q + 2 * kv) + q * h;
    attention = 2.0 * q;  // QK^T and AV: q multiply-adds each per token of context
  }
  const double dense_mlp = family == ModelFamily::kGpt2 ? 2.0 * h * inter : 3.0 * h * inter;
  const double moe_layers = double(moe.moe_layers_in(0, n_layers));
  const double dense_layers = double(n_layers) - moe_layers;
  // The active MoE MLP: the router's logits, k routed and every shared expert (norms and biases not counted).
  const double moe_mlp =
      double(moe.num_experts) * h + 3.0 * h *
                                        double(moe.experts_per_token * moe.expert_intermediate +
                                               moe.shared_experts * moe.shared_intermediate);
  double per_token = dense_layers * (attn_matmul + dense_mlp) + double(vocab) * h;
  if (moe_layers > 0) per_token += moe_layers * (attn_matmul + moe_mlp);
  per_token += attention * attended_tokens(0, n_layers, context);
  return 2.0 * tokens * per_token;
}

double ModelSpec::kv_cache_elements_per_rank(int tp) const {
  if (mla.enabled()) return double(mla.kv_lora_rank + mla.qk_rope_head_dim);
  // A tp above the KV heads (serving engines replicate them) still holds one head a rank.
  return 2.0 * double(std::max<int64_t>(1, n_kv_heads / tp)) * double(head_dim);
}

bool ModelSpec::operator==(const ModelSpec& o) const {
  return name == o.name && family == o.family && n_layers == o.n_layers && hidden == o.hidden &&
         intermediate == o.intermediate && n_heads == o.n_heads && n_kv_heads == o.n_kv_heads &&
         head_dim == o.head_dim && vocab == o.vocab && max_positions == o.max_positions &&
         tied_embeddings == o.tied_embeddings && qkv_bias == o.qkv_bias && norm_eps == o.norm_eps &&
         rope_theta == o.rope_theta && rope_scaling == o.rope_scaling && sliding_window == o.sliding_window &&
         sliding_window_pattern == o.sliding_window_pattern && qk_norm == o.qk_norm && moe == o.moe &&
         mla == o.mla;
}

namespace {

void validate_moe_spec(const ModelSpec& s, const std::string& path) {
  const MoeSpec& m = s.moe;
  const std::string p = path + ".moe.";
  if (m.experts_per_token <= 0 || m.experts_per_token > m.num_experts)
    throw Error(p + "experts_per_token", std::to_string(m.experts_per_token) + " is not between 1 and the " +
                                             std::to_string(m.num_experts) + " experts");
  if (m.expert_intermediate <= 0) throw Error(p + "expert_intermediate", "must be positive");
  if (m.shared_experts < 0 || (m.shared_experts > 0 && m.shared_intermediate <= 0))
    throw Error(p + "shared_intermediate", "shared experts need a positive inner size");
  if (m.sparse_step <= 0) throw Error(p + "sparse_step", "must be positive");
  if (m.first_dense_layers < 0 || m.first_dense_layers > s.n_layers)
    throw Error(p + "first_dense_layers",
                "must be between 0 and the " + std::to_string(s.n_layers) + " layers");
  for (int64_t l : m.dense_layers)
    if (l < 0 || l >= s.n_layers)
      throw Error(p + "dense_layers", "layer " + std::to_string(l) + " is not one of the " +
                                          std::to_string(s.n_layers) + " layers");
  if (m.groups <= 0 || m.num_experts % m.groups != 0)
    throw Error(p + "groups", std::to_string(m.groups) + " groups do not divide " +
                                  std::to_string(m.num_experts) + " experts");
  if (m.top_groups <= 0 || m.top_groups > m.groups)
    throw Error(p + "top_groups", "must be between 1 and the " + std::to_string(m.groups) + " groups");
  if (m.top_groups * (m.num_experts / m.groups) < m.experts_per_token)
    throw Error(p + "top_groups", "the best " + std::to_string(m.top_groups) +
                                      " groups hold fewer than the " + std::to_string(m.experts_per_token) +
                                      " experts a token picks");
  if (!(m.routed_scaling > 0)) throw Error(p + "routed_scaling", "must be positive");
}

}  // namespace

void validate_model_spec(const ModelSpec& s, const std::string& path) {
  auto positive = [&](int64_t v, const char* field) {
    if (v <= 0) throw Error(path + "." + field, "must be positive, got " + std::to_string(v));
  };
  positive(s.n_layers, "n_layers");
  positive(s.hidden, "hidden");
  positive(s.intermediate, "intermediate");
  positive(s.n_heads, "n_heads");
  positive(s.n_kv_heads, "n_kv_heads");
  positive(s.head_dim, "head_dim");
  positive(s.vocab, "vocab");
  positive(s.max_positions, "max_positions");
  if (s.n_heads % s.n_kv_heads != 0)
    throw Error(path + ".n_kv_heads", std::to_string(s.n_kv_heads) + " KV heads do not divide " +
                                          std::to_string(s.n_heads) + " attention heads");
  if (s.family == ModelFamily::kGpt2 && s.n_heads * s.head_dim != s.hidden)
    throw Error(path + ".n_heads",
                std::to_string(s.n_heads) + " heads do not divide hidden size " + std::to_string(s.hidden));
  if (s.head_dim % 2 != 0 && s.family != ModelFamily::kGpt2)
    throw Error(path + ".head_dim",
                "rotary embeddings need an even head dimension, got " + std::to_string(s.head_dim));
  if (!(s.norm_eps > 0)) throw Error(path + ".norm_eps", "must be positive");
  if (!(s.rope_theta > 0)) throw Error(path + ".rope_theta", "must be positive");
  if (s.sliding_window < 0) throw Error(path + ".sliding_window", "must be 0 (none) or positive");
  if (s.sliding_window_pattern < 0)
    throw Error(path + ".sliding_window_pattern", "must be 0 (every layer) or positive");
  if (s.is_moe()) validate_moe_spec(s, path);
}

std::string runtime_model_problem(const ModelSpec& s) {
  const std::string what = s.name + " (" + to_string(s.family) + ")";
  if (s.family == ModelFamily::kGemma2 || s.family == ModelFamily::kGemma3)
    return "family: the runtime does not build Gemma 2 or 3 (GeGLU MLPs, four norms a layer, soft-capped "
           "and pre-scaled attention, alternating local and global layers): " +
           what;
  if (s.family == ModelFamily::kGptOss)
    return "family: the runtime does not build gpt-oss (attention sinks, biased experts and output "
           "projection, a clamped SwiGLU): " +
           what;
  if (s.mla.enabled())
    return "mla: the runtime does not run multi-head latent attention (DeepSeek-V2's and V3's) yet: " + what;
  if (s.sliding_window > 0 && s.sliding_window_pattern > 0)
    return "sliding_window_pattern: the runtime windows every layer or none, not alternating local and "
           "global layers: " +
           what;
  if (!s.is_moe()) return "";
  const MoeSpec& m = s.moe;
  if (m.scoring != RouterScoring::kSoftmax || m.selection_bias || m.groups != 1 || m.routed_scaling != 1.0)
    return "moe.scoring: the runtime routes by softmax top-k (Mixtral, Qwen2-MoE, Qwen3-MoE) only, not by " +
           describe_router(m) + ": " + what;
  if (m.shared_experts > 1 || (m.shared_experts == 1 && !m.shared_expert_gate))
    return "moe.shared_experts: the runtime runs Qwen2-MoE's one gated shared expert only: " + what;
  return "";
}

Json to_json(const ModelSpec& s) {
  Json j = model_spec_to_hf_config(s);
  j["name"] = s.name;
  j["total_params"] = s.total_params();
  if (s.is_moe()) j["active_params"] = s.active_params();
  return j;
}

}  // namespace realign
