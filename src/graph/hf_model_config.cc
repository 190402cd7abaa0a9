// HF config.json <-> ModelSpec for every family (the MoE families' own fields: hf_moe_config.cc).
#include <algorithm>
#include <vector>

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

namespace {

bool gemma(ModelFamily f) { return f == ModelFamily::kGemma2 || f == ModelFamily::kGemma3; }
bool deepseek(ModelFamily f) { return f == ModelFamily::kDeepseekV2 || f == ModelFamily::kDeepseekV3; }

// A field with the default transformers' configuration class gives it when config.json leaves it out: the
// published Gemma 3 configs (google/gemma-3-4b-it ...) list only what differs from Gemma3TextConfig's
// defaults. Other families need the field.
int64_t field_or_default(const Json& c, const char* key, bool has_default, int64_t fallback,
                         const std::string& path) {
  return has_default ? get_int_or(c, key, fallback, path) : get_int(c, key, path);
}

// The RoPE settings of a config: rope_theta and rope_scaling, or transformers 5's rope_parameters (one
// object with rope_theta and rope_type, or, for Gemma 3, one per attention kind: the global layers' is the
// one priced; the local layers' theta changes no cost).
struct Rope {
  double theta;
  Json scaling;  // null: none
};

Rope read_rope(const Json& c, double default_theta, const std::string& path) {
  Rope r{hf::get_double_or(c, "rope_theta", default_theta, path), nullptr};
  if (auto rs = c.find("rope_scaling"); rs != c.end() && !rs->is_null()) r.scaling = *rs;
  auto rp = c.find("rope_parameters");
  if (rp == c.end() || rp->is_null() || c.contains("rope_theta")) return r;
  if (!rp->is_object()) throw Error(path + ": rope_parameters", "must be an object");
  const Json& global = rp->contains("full_attention") ? rp->at("full_attention") : *rp;
  if (!global.is_object()) throw Error(path + ": rope_parameters", "must be an object");
  r.theta = hf::get_double_or(global, "rope_theta", default_theta, path + ": rope_parameters");
  const std::string type = global.value("rope_type", std::string("default"));
  if (type != "default") r.scaling = global;
  return r;
}

// Which layers are local: layer_types (transformers 4.53+: "sliding_attention" / "full_attention" per
// layer), else sliding_window_pattern (Gemma 3), else the family's (Gemma 2 alternates; Mistral windows every
// layer). A layer_types list that no pattern describes is refused, naming the field.
int64_t read_window_pattern(const Json& c, const ModelSpec& s, const std::string& path) {
  auto lt = c.find("layer_types");
  if (lt != c.end() && !lt->is_null()) {
    if (!lt->is_array() || int64_t(lt->size()) != s.n_layers)
      throw Error(path + ": layer_types",
                  "must list the attention of each of the " + std::to_string(s.n_layers) + " layers");
    std::vector<bool> local;
    for (size_t i = 0; i < lt->size(); ++i) {
      const std::string t = json_to_string((*lt)[i], path + ": layer_types[" + std::to_string(i) + "]");
      if (t != "sliding_attention" && t != "full_attention")
        throw Error(path + ": layer_types[" + std::to_string(i) + "]",
                    "'" + t + "' is not sliding_attention or full_attention");
      local.push_back(t == "sliding_attention");
    }
    int64_t pattern = 0;  // every layer local
    for (size_t i = 0; i < local.size(); ++i)
      if (!local[i]) {
        pattern = int64_t(i) + 1;
        break;
      }
    if (pattern == 1) {  // no local layer at all
      if (std::find(local.begin(), local.end(), true) == local.end()) return -1;
    }
    for (size_t i = 0; i < local.size(); ++i)
      if (pattern > 0 && local[i] != ((int64_t(i) + 1) % pattern != 0))
        throw Error(path + ": layer_types",
                    "local and global layers that do not repeat every " + std::to_string(pattern) +
                        " layers are not supported (realign prices a window on all but every N-th layer)");
    return pattern;
  }
  if (s.family == ModelFamily::kGemma2) return 2;
  if (s.family == ModelFamily::kGemma3)
    return get_int_or(c, "sliding_window_pattern", get_int_or(c, "_sliding_window_pattern", 6, path), path);
  return 0;
}

}  // namespace

ModelSpec model_spec_from_hf_config(const Json& c, const std::string& path) {
  if (!c.is_object()) throw Error(path, "config.json must hold a JSON object");
  auto mt = c.find("model_type");
  if (mt == c.end() || !mt->is_string()) throw Error(path, "config.json lacks a \"model_type\" string");
  if (mt->get<std::string>() == "gemma3") {
    // Gemma3ForConditionalGeneration (google/gemma-3-4b-it and up): the text decoder's shape is its
    // text_config; the SigLIP vision tower and its projector (about 0.42B parameters) are not part of it.
    auto tc = c.find("text_config");
    if (tc == c.end() || !tc->is_object())
      throw Error(path + ": text_config", "a gemma3 config.json holds its decoder's shape in text_config");
    Json text = *tc;
    text["model_type"] = "gemma3_text";
    ModelSpec s = model_spec_from_hf_config(text, path + ": text_config");
    s.name = path;
    return s;
  }
  if (mt->get<std::string>() == "seed_oss" || mt->get<std::string>() == "mimo") {
    // Qwen2's layer under another model_type: Seed-OSS (SeedOssForCausalLM: q, k and v biased by
    // attention_bias, the output projection by attention_out_bias, the MLP by mlp_bias) and MiMo
    // (MiMoForCausalLM: Qwen2's model and multi-token-prediction layers, which are not part of the shape).
    Json qwen2 = c;
    qwen2["model_type"] = "qwen2";
    for (const char* bias : {"attention_out_bias", "mlp_bias"})
      if (get_bool_or(c, bias, false, path))
        throw Error(path + ": " + bias, "true: Qwen2's layer, which " + mt->get<std::string>() +
                                            " is read as, biases only q, k and v");
    if (!get_bool_or(c, "attention_bias", true, path))
      throw Error(path + ": attention_bias",
                  "false: Qwen2's layer, which " + mt->get<std::string>() + " is read as, biases q, k and v");
    qwen2.erase("num_nextn_predict_layers");
    ModelSpec s = model_spec_from_hf_config(qwen2, path);
    s.name = path;
    return s;
  }
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
    const bool g = gemma(s.family), g3 = s.family == ModelFamily::kGemma3;
    s.n_layers = get_int(c, "num_hidden_layers", path);
    s.hidden = get_int(c, "hidden_size", path);
    s.intermediate = get_int(c, "intermediate_size", path);
    // Gemma2Config / Gemma3TextConfig defaults: 8 heads, 4 KV heads of 256, 256k vocabulary (Gemma 3:
    // 262,208), 8,192 positions (Gemma 3: 131,072), rope_theta 1e4 (Gemma 3: 1e6), tied embeddings.
    s.n_heads = field_or_default(c, "num_attention_heads", g, 8, path);
    s.n_kv_heads = get_int_or(c, "num_key_value_heads", g ? 4 : s.n_heads, path);
    if (s.n_heads <= 0) throw Error(path + ": num_attention_heads", "must be positive");
    s.head_dim = get_int_or(c, "head_dim", g ? 256 : s.hidden / s.n_heads, path);
    s.vocab = field_or_default(c, "vocab_size", g, g3 ? 262208 : 256000, path);
    s.max_positions = field_or_default(c, "max_position_embeddings", g, g3 ? 131072 : 8192, path);
    s.norm_eps = get_double_or(c, "rms_norm_eps", 1e-6, path);
    const Rope rope = read_rope(c, g3 ? 1e6 : 10000.0, path);
    s.rope_theta = rope.theta;
    s.tied_embeddings = get_bool_or(c, "tie_word_embeddings", g, path);
    const bool qwen = s.family == ModelFamily::kQwen2 || s.family == ModelFamily::kQwen3 ||
                      s.family == ModelFamily::kQwen2Moe || s.family == ModelFamily::kQwen3Moe;
    s.qkv_bias = s.family == ModelFamily::kQwen2 || s.family == ModelFamily::kQwen2Moe;
    // gpt-oss biases q, k, v and the output projection (GptOssConfig: attention_bias true); the output's
    // bias, the heads' attention sinks and the experts' biases are not part of the shape (elementwise).
    if (s.family == ModelFamily::kGptOss) s.qkv_bias = get_bool_or(c, "attention_bias", true, path);
    // HF's Qwen3Attention and Gemma3Attention always have q_norm and k_norm (Qwen3-MoE's are set with its
    // MoE fields).
    if (s.family == ModelFamily::kQwen3 || g3) s.qk_norm = true;
    if ((s.family == ModelFamily::kLlama || s.family == ModelFamily::kQwen3 ||
         s.family == ModelFamily::kQwen3Moe || deepseek(s.family) || g) &&
        get_bool_or(c, "attention_bias", false, path))
      throw Error(path + ": attention_bias", to_string(s.family) + " with attention biases is not supported");
    if (s.family == ModelFamily::kMistral || s.family == ModelFamily::kMixtral ||
        s.family == ModelFamily::kGptOss)
      s.sliding_window = get_int_or(c, "sliding_window", 0, path);
    if (qwen && get_bool_or(c, "use_sliding_window", false, path))
      s.sliding_window = get_int_or(c, "sliding_window", 0, path);
    if (g) s.sliding_window = get_int_or(c, "sliding_window", 4096, path);
    if (const int64_t pattern = read_window_pattern(c, s, path); pattern < 0)
      s.sliding_window = 0;  // layer_types: every layer global
    else
      s.sliding_window_pattern = s.sliding_window > 0 ? pattern : 0;
    if (!rope.scaling.is_null()) {
      const Json& rs = rope.scaling;
      const std::string at = path + (c.contains("rope_scaling") ? ": rope_scaling" : ": rope_parameters");
      if (!rs.is_object()) throw Error(at, "must be an object or null");
      std::string type = rs.value("rope_type", rs.value("type", std::string()));
      if (type == "default") {
        // no scaling
      } else if (type == "llama3") {
        s.rope_scaling.type = "llama3";
        s.rope_scaling.factor = get_double_or(rs, "factor", 8.0, at);
        s.rope_scaling.low_freq_factor = get_double_or(rs, "low_freq_factor", 1.0, at);
        s.rope_scaling.high_freq_factor = get_double_or(rs, "high_freq_factor", 4.0, at);
        s.rope_scaling.original_max_position = get_int_or(rs, "original_max_position_embeddings", 8192, at);
      } else if (type == "yarn" && (deepseek(s.family) || s.family == ModelFamily::kGptOss)) {
        // DeepSeek's and gpt-oss's long-context YaRN: the planner needs only its positions (the runtime does
        // not run it).
        s.rope_scaling.type = "yarn";
        s.rope_scaling.factor = get_double_or(rs, "factor", 1.0, at);
        s.rope_scaling.original_max_position =
            get_int_or(rs, "original_max_position_embeddings", s.max_positions, at);
      } else if (type == "linear" && g3) {
        // Gemma 3's global layers (4B and up): positions interpolated by `factor`; no cost of its own.
        s.rope_scaling.type = "linear";
        s.rope_scaling.factor = get_double_or(rs, "factor", 1.0, at);
      } else {
        throw Error(at, "rope type '" + type + "' is not supported (supported: llama3" +
                            (deepseek(s.family) || s.family == ModelFamily::kGptOss ? ", yarn)"
                             : g3                                                   ? ", linear)"
                                                                                    : ")"));
      }
    }
    if (g) {
      // GeGLU: gelu(gate) * up, the GEMMs of SwiGLU (transformers reads hidden_activation; older configs
      // also write hidden_act).
      const std::string act =
          c.value("hidden_activation", c.value("hidden_act", std::string("gelu_pytorch_tanh")));
      if (act != "gelu_pytorch_tanh" && act != "gelu")
        throw Error(path + ": hidden_activation",
                    "'" + act + "' is not supported (supported: gelu_pytorch_tanh, gelu)");
    } else {
      const std::string act = c.value("hidden_act", std::string("silu"));
      if (act != "silu")
        throw Error(path + ": hidden_act", "'" + act + "' is not supported (supported: silu)");
    }
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
      {ModelFamily::kLlama, "LlamaForCausalLM"},
      {ModelFamily::kQwen2, "Qwen2ForCausalLM"},
      {ModelFamily::kQwen3, "Qwen3ForCausalLM"},
      {ModelFamily::kMistral, "MistralForCausalLM"},
      {ModelFamily::kMixtral, "MixtralForCausalLM"},
      {ModelFamily::kQwen2Moe, "Qwen2MoeForCausalLM"},
      {ModelFamily::kQwen3Moe, "Qwen3MoeForCausalLM"},
      {ModelFamily::kDeepseekV3, "DeepseekV3ForCausalLM"},
      {ModelFamily::kDeepseekV2, "DeepseekV2ForCausalLM"},
      {ModelFamily::kGemma2, "Gemma2ForCausalLM"},
      {ModelFamily::kGemma3, "Gemma3ForCausalLM"},
      {ModelFamily::kGptOss, "GptOssForCausalLM"}};
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
  c["hidden_act"] = gemma(s.family) ? "gelu_pytorch_tanh" : "silu";
  if (gemma(s.family)) c["hidden_activation"] = "gelu_pytorch_tanh";
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
  } else if (s.rope_scaling.type == "linear") {
    c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", s.rope_scaling.factor}};
  } else {
    c["rope_scaling"] = nullptr;
  }
  if (s.sliding_window_pattern > 0 || (gemma(s.family) && s.sliding_window == 0)) {
    // Which layers are local, as transformers 4.53+ writes it (and Gemma 3's older sliding_window_pattern).
    Json types = Json::array();
    for (int64_t l = 0; l < s.n_layers; ++l)
      types.push_back(s.sliding_layer(l) ? "sliding_attention" : "full_attention");
    c["layer_types"] = types;
    if (s.family == ModelFamily::kGemma3 && s.sliding_window_pattern > 0)
      c["sliding_window_pattern"] = s.sliding_window_pattern;
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
