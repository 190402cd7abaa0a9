// HF config.json <-> ModelSpec for every family (the MoE families' own fields: hf_moe_config.cc).
#include "graph/hf_fields.h"
#include "graph/hf_moe_config.h"
#include "graph/model_spec.h"

namespace realign {

namespace hf {

int64_t get_int(const Json& c, const char* key, const std::string& path) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) throw Error(path, std::string("config.json lacks \"") + key + "\"");
  return json_to_int(*it, path + ": " + key);
}

int64_t get_int_or(const Json& c, const char* key, int64_t fallback, const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_int(*it, path + ": " + key);
}

double get_double_or(const Json& c, const char* key, double fallback, const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_double(*it, path + ": " + key);
}

bool get_bool_or(const Json& c, const char* key, bool fallback, const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_bool(*it, path + ": " + key);
}

std::string get_string_or(const Json& c, const char* key, const std::string& fallback,
                          const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_string(*it, path + ": " + key);
}

}  // namespace hf

namespace {
using hf::get_bool_or;
using hf::get_double_or;
using hf::get_int;
using hf::get_int_or;
}  // namespace

ModelSpec model_spec_from_hf_config(const Json& c, const std::string& path) {
  if (!c.is_object()) throw Error(path, "config.json must hold a JSON object");
  auto mt = c.find("model_type");
  if (mt == c.end() || !mt->is_string()) throw Error(path, "config.json lacks a \"model_type\" string");
  ModelSpec s;
  s.name = path;
  s.family = model_family_from_string(mt->get<std::string>(), path + ": model_type");
  if (s.family == ModelFamily::kGpt2) {
    s.n_layers = get_int(c, "n_layer", path);
    s.hidden = get_int(c, "n_embd", path);
    s.n_heads = get_int(c, "n_head", path);
    s.n_kv_heads = s.n_heads;
    s.intermediate = get_int_or(c, "n_inner", 4 * s.hidden, path);
    s.vocab = get_int(c, "vocab_size", path);
    s.max_positions = get_int(c, "n_positions", path);
    s.norm_eps = get_double_or(c, "layer_norm_epsilon", 1e-5, path);
    s.tied_embeddings = get_bool_or(c, "tie_word_embeddings", true, path);
    s.qkv_bias = true;
    if (!s.tied_embeddings)
      throw Error(path + ": tie_word_embeddings", "GPT-2 with untied embeddings is not supported");
    if (s.n_heads <= 0 || s.hidden % s.n_heads != 0)
      throw Error(path + ": n_head",
                  std::to_string(s.n_heads) + " heads do not divide n_embd " + std::to_string(s.hidden));
    s.head_dim = s.hidden / s.n_heads;
  } else {
    s.n_layers = get_int(c, "num_hidden_layers", path);
    s.hidden = get_int(c, "hidden_size", path);
    s.intermediate = get_int(c, "intermediate_size", path);
    s.n_heads = get_int(c, "num_attention_heads", path);
    s.n_kv_heads = get_int_or(c, "num_key_value_heads", s.n_heads, path);
    if (s.n_heads <= 0) throw Error(path + ": num_attention_heads", "must be positive");
    s.head_dim = get_int_or(c, "head_dim", s.hidden / s.n_heads, path);
    s.vocab = get_int(c, "vocab_size", path);
    s.max_positions = get_int(c, "max_position_embeddings", path);
    s.norm_eps = get_double_or(c, "rms_norm_eps", 1e-6, path);
    s.rope_theta = get_double_or(c, "rope_theta", 10000.0, path);
    s.tied_embeddings = get_bool_or(c, "tie_word_embeddings", false, path);
    const bool qwen = s.family == ModelFamily::kQwen2 || s.family == ModelFamily::kQwen3 ||
                      s.family == ModelFamily::kQwen2Moe || s.family == ModelFamily::kQwen3Moe;
    s.qkv_bias = s.family == ModelFamily::kQwen2 || s.family == ModelFamily::kQwen2Moe;
    // HF's Qwen3Attention always has q_norm and k_norm (Qwen3-MoE's are set with its MoE fields).
    if (s.family == ModelFamily::kQwen3) s.qk_norm = true;
    if ((s.family == ModelFamily::kLlama || s.family == ModelFamily::kQwen3 ||
         s.family == ModelFamily::kQwen3Moe || s.family == ModelFamily::kDeepseekV3) &&
        get_bool_or(c, "attention_bias", false, path))
      throw Error(path + ": attention_bias", to_string(s.family) + " with attention biases is not supported");
    if (s.family == ModelFamily::kMistral || s.family == ModelFamily::kMixtral)
      s.sliding_window = get_int_or(c, "sliding_window", 0, path);
    if (qwen && get_bool_or(c, "use_sliding_window", false, path))
      s.sliding_window = get_int_or(c, "sliding_window", 0, path);
    auto rs = c.find("rope_scaling");
    if (rs != c.end() && !rs->is_null()) {
      if (!rs->is_object()) throw Error(path + ": rope_scaling", "must be an object or null");
      std::string type = rs->value("rope_type", rs->value("type", std::string()));
      if (type == "default") {
        // no scaling
      } else if (type == "llama3") {
        s.rope_scaling.type = "llama3";
        s.rope_scaling.factor = get_double_or(*rs, "factor", 8.0, path + ": rope_scaling");
        s.rope_scaling.low_freq_factor = get_double_or(*rs, "low_freq_factor", 1.0, path + ": rope_scaling");
        s.rope_scaling.high_freq_factor =
            get_double_or(*rs, "high_freq_factor", 4.0, path + ": rope_scaling");
        s.rope_scaling.original_max_position =
            get_int_or(*rs, "original_max_position_embeddings", 8192, path + ": rope_scaling");
      } else if (type == "yarn" && s.family == ModelFamily::kDeepseekV3) {
        // DeepSeek-V3's long-context YaRN: the planner needs only its positions (the runtime does not run
        // it).
        s.rope_scaling.type = "yarn";
        s.rope_scaling.factor = get_double_or(*rs, "factor", 1.0, path + ": rope_scaling");
        s.rope_scaling.original_max_position =
            get_int_or(*rs, "original_max_position_embeddings", s.max_positions, path + ": rope_scaling");
      } else {
        throw Error(path + ": rope_scaling", "rope type '" + type + "' is not supported (supported: llama3" +
                                                 (s.family == ModelFamily::kDeepseekV3 ? ", yarn)" : ")"));
      }
    }
    const std::string act = c.value("hidden_act", std::string("silu"));
    if (act != "silu") throw Error(path + ": hidden_act", "'" + act + "' is not supported (supported: silu)");
  }
  if (hf::is_moe_family(s.family))
    hf::read_moe_fields(c, path, s);
  else
    hf::refuse_moe_fields(c, path, s.family);
  validate_model_spec(s, path);
  return s;
}

Json model_spec_to_hf_config(const ModelSpec& s) {
  Json c;
  if (s.family == ModelFamily::kGpt2) {
    c["architectures"] = {"GPT2LMHeadModel"};
    c["model_type"] = "gpt2";
    c["n_layer"] = s.n_layers;
    c["n_embd"] = s.hidden;
    c["n_head"] = s.n_heads;
    c["n_inner"] = s.intermediate;
    c["vocab_size"] = s.vocab;
    c["n_positions"] = s.max_positions;
    c["layer_norm_epsilon"] = s.norm_eps;
    c["activation_function"] = "gelu_new";
    c["tie_word_embeddings"] = true;
    return c;
  }
  static const std::pair<ModelFamily, const char*> arch[] = {
      {ModelFamily::kLlama, "LlamaForCausalLM"},       {ModelFamily::kQwen2, "Qwen2ForCausalLM"},
      {ModelFamily::kQwen3, "Qwen3ForCausalLM"},       {ModelFamily::kMistral, "MistralForCausalLM"},
      {ModelFamily::kMixtral, "MixtralForCausalLM"},   {ModelFamily::kQwen2Moe, "Qwen2MoeForCausalLM"},
      {ModelFamily::kQwen3Moe, "Qwen3MoeForCausalLM"}, {ModelFamily::kDeepseekV3, "DeepseekV3ForCausalLM"}};
  for (const auto& [family, name] : arch)
    if (family == s.family) c["architectures"] = {name};
  c["model_type"] = to_string(s.family);
  c["num_hidden_layers"] = s.n_layers;
  c["hidden_size"] = s.hidden;
  c["intermediate_size"] = s.intermediate;
  c["num_attention_heads"] = s.n_heads;
  c["num_key_value_heads"] = s.n_kv_heads;
  c["head_dim"] = s.head_dim;
  c["vocab_size"] = s.vocab;
  c["max_position_embeddings"] = s.max_positions;
  c["rms_norm_eps"] = s.norm_eps;
  c["rope_theta"] = s.rope_theta;
  c["hidden_act"] = "silu";
  c["tie_word_embeddings"] = s.tied_embeddings;
  if (s.rope_scaling.type == "llama3") {
    c["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", s.rope_scaling.factor},
                         {"low_freq_factor", s.rope_scaling.low_freq_factor},
                         {"high_freq_factor", s.rope_scaling.high_freq_factor},
                         {"original_max_position_embeddings", s.rope_scaling.original_max_position}};
  } else if (s.rope_scaling.type == "yarn") {
    c["rope_scaling"] = {{"type", "yarn"},
                         {"factor", s.rope_scaling.factor},
                         {"original_max_position_embeddings", s.rope_scaling.original_max_position}};
  } else {
    c["rope_scaling"] = nullptr;
  }
  if (s.sliding_window > 0) {
    c["sliding_window"] = s.sliding_window;
    if (s.family == ModelFamily::kQwen2 || s.family == ModelFamily::kQwen3 ||
        s.family == ModelFamily::kQwen2Moe || s.family == ModelFamily::kQwen3Moe)
      c["use_sliding_window"] = true;
  }
  if (hf::is_moe_family(s.family)) hf::write_moe_fields(s, c);
  return c;
}

}  // namespace realign
