#include "graph/model_spec.h"

#include <map>

namespace realign {

std::string to_string(ModelFamily family) {
  switch (family) {
    case ModelFamily::kLlama: return "llama";
    case ModelFamily::kQwen2: return "qwen2";
    case ModelFamily::kMistral: return "mistral";
    case ModelFamily::kGpt2: return "gpt2";
  }
  return "?";
}

ModelFamily model_family_from_string(const std::string& name, const std::string& path) {
  if (name == "llama") return ModelFamily::kLlama;
  if (name == "qwen2") return ModelFamily::kQwen2;
  if (name == "mistral") return ModelFamily::kMistral;
  if (name == "gpt2") return ModelFamily::kGpt2;
  throw Error(path, "unknown architecture '" + name + "'; supported: llama, qwen2, mistral, gpt2");
}

bool RopeScaling::operator==(const RopeScaling& o) const {
  return type == o.type && factor == o.factor && low_freq_factor == o.low_freq_factor &&
         high_freq_factor == o.high_freq_factor && original_max_position == o.original_max_position;
}

int64_t ModelSpec::params_per_layer() const {
  const int64_t q = n_heads * head_dim, kv = n_kv_heads * head_dim;
  if (family == ModelFamily::kGpt2) {
    // c_attn (h -> 3h) + c_proj (h -> h) + c_fc (h -> 4h) + c_proj (4h -> h), all biased; two LayerNorms.
    return hidden * (q + 2 * kv) + (q + 2 * kv) + q * hidden + hidden + 2 * hidden * intermediate +
           intermediate + hidden + 4 * hidden;
  }
  const int64_t attention = hidden * (q + 2 * kv) + q * hidden + (qkv_bias ? q + 2 * kv : 0);
  const int64_t mlp = 3 * hidden * intermediate;  // SwiGLU: gate, up, down
  return attention + mlp + 2 * hidden;            // two RMSNorms
}

int64_t ModelSpec::embedding_params() const {
  return vocab * hidden + (family == ModelFamily::kGpt2 ? max_positions * hidden : 0);
}

int64_t ModelSpec::head_params() const {
  const int64_t final_norm = family == ModelFamily::kGpt2 ? 2 * hidden : hidden;
  return final_norm + (tied_embeddings ? 0 : vocab * hidden);
}

int64_t ModelSpec::total_params() const {
  return n_layers * params_per_layer() + embedding_params() + head_params();
}

double ModelSpec::forward_flops(double tokens, double context) const {
  const double q = double(n_heads * head_dim), kv = double(n_kv_heads * head_dim);
  const double h = double(hidden), inter = double(intermediate);
  const double mlp_matrices = family == ModelFamily::kGpt2 ? 2.0 * h * inter : 3.0 * h * inter;
  const double layer_matmul = h * (q + 2 * kv) + q * h + mlp_matrices;
  const double attention = 2.0 * q * context;  // QK^T and AV: q * context multiply-adds each
  const double per_token = double(n_layers) * (layer_matmul + attention) + double(vocab) * h;
  return 2.0 * tokens * per_token;
}

bool ModelSpec::operator==(const ModelSpec& o) const {
  return name == o.name && family == o.family && n_layers == o.n_layers && hidden == o.hidden &&
         intermediate == o.intermediate && n_heads == o.n_heads && n_kv_heads == o.n_kv_heads &&
         head_dim == o.head_dim && vocab == o.vocab && max_positions == o.max_positions &&
         tied_embeddings == o.tied_embeddings && qkv_bias == o.qkv_bias && norm_eps == o.norm_eps &&
         rope_theta == o.rope_theta && rope_scaling == o.rope_scaling && sliding_window == o.sliding_window;
}

namespace {

ModelSpec llama(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                int64_t kv_heads, int64_t vocab, int64_t max_pos, double theta) {
  ModelSpec s;
  s.name = name;
  s.family = ModelFamily::kLlama;
  s.n_layers = layers;
  s.hidden = hidden;
  s.intermediate = inter;
  s.n_heads = heads;
  s.n_kv_heads = kv_heads;
  s.head_dim = hidden / heads;
  s.vocab = vocab;
  s.max_positions = max_pos;
  s.rope_theta = theta;
  return s;
}

ModelSpec qwen25(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                 int64_t kv_heads, int64_t vocab, bool tied) {
  ModelSpec s = llama(name, layers, hidden, inter, heads, kv_heads, vocab, 32768, 1e6);
  s.family = ModelFamily::kQwen2;
  s.qkv_bias = true;
  s.tied_embeddings = tied;
  s.norm_eps = 1e-6;
  return s;
}

ModelSpec gpt2(const std::string& name, int64_t layers, int64_t hidden, int64_t heads, int64_t vocab,
               int64_t max_pos) {
  ModelSpec s;
  s.name = name;
  s.family = ModelFamily::kGpt2;
  s.n_layers = layers;
  s.hidden = hidden;
  s.intermediate = 4 * hidden;
  s.n_heads = heads;
  s.n_kv_heads = heads;
  s.head_dim = hidden / heads;
  s.vocab = vocab;
  s.max_positions = max_pos;
  s.tied_embeddings = true;
  s.qkv_bias = true;
  return s;
}

// Shapes from the models' published HF config.json files. "llama2-34b" was never released; like ReaL we use
// CodeLlama-34B's shape (GQA with 8 KV heads, rope_theta 1e6).
const std::map<std::string, ModelSpec>& builtins() {
  static const std::map<std::string, ModelSpec> table = [] {
    std::map<std::string, ModelSpec> t;
    auto add = [&](ModelSpec s) { t.emplace(s.name, std::move(s)); };
    add(llama("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, 1e4));
    add(llama("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096, 1e4));
    add(llama("llama2-34b", 48, 8192, 22016, 64, 8, 32000, 16384, 1e6));
    add(llama("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, 1e4));
    ModelSpec l3_8 = llama("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, 5e5);
    ModelSpec l3_70 = llama("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, 5e5);
    add(l3_8);
    add(l3_70);
    add(qwen25("qwen2.5-0.5b", 24, 896, 4864, 14, 2, 151936, true));
    add(qwen25("qwen2.5-1.5b", 28, 1536, 8960, 12, 2, 151936, true));
    add(qwen25("qwen2.5-3b", 36, 2048, 11008, 16, 2, 151936, true));
    add(qwen25("qwen2.5-7b", 28, 3584, 18944, 28, 4, 152064, false));
    add(qwen25("qwen2.5-14b", 48, 5120, 13824, 40, 8, 152064, false));
    add(qwen25("qwen2.5-32b", 64, 5120, 27648, 40, 8, 152064, false));
    add(qwen25("qwen2.5-72b", 80, 8192, 29568, 64, 8, 152064, false));
    add(gpt2("gpt2", 12, 768, 12, 50257, 1024));
    add(gpt2("gpt2-medium", 24, 1024, 16, 50257, 1024));
    // Tiny shapes for tests and CPU runs.
    add(llama("llama-tiny", 2, 64, 176, 4, 2, 256, 512, 1e4));
    add(llama("llama-small", 4, 256, 688, 8, 4, 512, 1024, 1e4));
    add(gpt2("gpt2-tiny", 2, 64, 4, 256, 256));
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& kv : builtins()) names.push_back(kv.first);
  return names;
}

ModelSpec builtin_model(const std::string& name, const std::string& path) {
  auto it = builtins().find(name);
  if (it == builtins().end()) {
    std::string known;
    for (const auto& n : builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error(path, "unknown model '" + name + "'; built-in models are " + known +
                          ", or give the path of an HF config.json");
  }
  return it->second;
}

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
    throw Error(path + ".n_heads", std::to_string(s.n_heads) + " heads do not divide hidden size " +
                                       std::to_string(s.hidden));
  if (s.head_dim % 2 != 0 && s.family != ModelFamily::kGpt2)
    throw Error(path + ".head_dim", "rotary embeddings need an even head dimension, got " +
                                        std::to_string(s.head_dim));
  if (!(s.norm_eps > 0)) throw Error(path + ".norm_eps", "must be positive");
  if (!(s.rope_theta > 0)) throw Error(path + ".rope_theta", "must be positive");
}

namespace {

int64_t hf_int(const Json& c, const char* key, const std::string& path) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) throw Error(path, std::string("config.json lacks \"") + key + "\"");
  return json_to_int(*it, path + ": " + key);
}

int64_t hf_int_or(const Json& c, const char* key, int64_t fallback, const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_int(*it, path + ": " + key);
}

double hf_double_or(const Json& c, const char* key, double fallback, const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_double(*it, path + ": " + key);
}

bool hf_bool_or(const Json& c, const char* key, bool fallback, const std::string& path) {
  auto it = c.find(key);
  return (it == c.end() || it->is_null()) ? fallback : json_to_bool(*it, path + ": " + key);
}

}  // namespace

ModelSpec model_spec_from_hf_config(const Json& c, const std::string& path) {
  if (!c.is_object()) throw Error(path, "config.json must hold a JSON object");
  auto mt = c.find("model_type");
  if (mt == c.end() || !mt->is_string()) throw Error(path, "config.json lacks a \"model_type\" string");
  ModelSpec s;
  s.name = path;
  s.family = model_family_from_string(mt->get<std::string>(), path + ": model_type");
  if (s.family == ModelFamily::kGpt2) {
    s.n_layers = hf_int(c, "n_layer", path);
    s.hidden = hf_int(c, "n_embd", path);
    s.n_heads = hf_int(c, "n_head", path);
    s.n_kv_heads = s.n_heads;
    s.intermediate = hf_int_or(c, "n_inner", 4 * s.hidden, path);
    s.vocab = hf_int(c, "vocab_size", path);
    s.max_positions = hf_int(c, "n_positions", path);
    s.norm_eps = hf_double_or(c, "layer_norm_epsilon", 1e-5, path);
    s.tied_embeddings = hf_bool_or(c, "tie_word_embeddings", true, path);
    s.qkv_bias = true;
    if (!s.tied_embeddings) throw Error(path + ": tie_word_embeddings", "GPT-2 with untied embeddings is not supported");
    if (s.n_heads <= 0 || s.hidden % s.n_heads != 0)
      throw Error(path + ": n_head", std::to_string(s.n_heads) + " heads do not divide n_embd " +
                                         std::to_string(s.hidden));
    s.head_dim = s.hidden / s.n_heads;
  } else {
    s.n_layers = hf_int(c, "num_hidden_layers", path);
    s.hidden = hf_int(c, "hidden_size", path);
    s.intermediate = hf_int(c, "intermediate_size", path);
    s.n_heads = hf_int(c, "num_attention_heads", path);
    s.n_kv_heads = hf_int_or(c, "num_key_value_heads", s.n_heads, path);
    if (s.n_heads <= 0) throw Error(path + ": num_attention_heads", "must be positive");
    s.head_dim = hf_int_or(c, "head_dim", s.hidden / s.n_heads, path);
    s.vocab = hf_int(c, "vocab_size", path);
    s.max_positions = hf_int(c, "max_position_embeddings", path);
    s.norm_eps = hf_double_or(c, "rms_norm_eps", 1e-6, path);
    s.rope_theta = hf_double_or(c, "rope_theta", 10000.0, path);
    s.tied_embeddings = hf_bool_or(c, "tie_word_embeddings", false, path);
    s.qkv_bias = s.family == ModelFamily::kQwen2;
    if (s.family == ModelFamily::kLlama && hf_bool_or(c, "attention_bias", false, path))
      throw Error(path + ": attention_bias", "LLaMA with attention biases is not supported");
    if (s.family == ModelFamily::kMistral) s.sliding_window = hf_int_or(c, "sliding_window", 0, path);
    if (s.family == ModelFamily::kQwen2 && hf_bool_or(c, "use_sliding_window", false, path))
      s.sliding_window = hf_int_or(c, "sliding_window", 0, path);
    auto rs = c.find("rope_scaling");
    if (rs != c.end() && !rs->is_null()) {
      if (!rs->is_object()) throw Error(path + ": rope_scaling", "must be an object or null");
      std::string type = rs->value("rope_type", rs->value("type", std::string()));
      if (type == "default") {
        // no scaling
      } else if (type == "llama3") {
        s.rope_scaling.type = "llama3";
        s.rope_scaling.factor = hf_double_or(*rs, "factor", 8.0, path + ": rope_scaling");
        s.rope_scaling.low_freq_factor = hf_double_or(*rs, "low_freq_factor", 1.0, path + ": rope_scaling");
        s.rope_scaling.high_freq_factor = hf_double_or(*rs, "high_freq_factor", 4.0, path + ": rope_scaling");
        s.rope_scaling.original_max_position =
            hf_int_or(*rs, "original_max_position_embeddings", 8192, path + ": rope_scaling");
      } else {
        throw Error(path + ": rope_scaling", "rope type '" + type + "' is not supported (supported: llama3)");
      }
    }
    const std::string act = c.value("hidden_act", std::string("silu"));
    if (act != "silu") throw Error(path + ": hidden_act", "'" + act + "' is not supported (supported: silu)");
  }
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
  static const char* arch[] = {"LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"};
  c["architectures"] = {arch[static_cast<int>(s.family)]};
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
  } else {
    c["rope_scaling"] = nullptr;
  }
  if (s.sliding_window > 0) {
    c["sliding_window"] = s.sliding_window;
    if (s.family == ModelFamily::kQwen2) c["use_sliding_window"] = true;
  }
  return c;
}

Json to_json(const ModelSpec& s) {
  Json j = model_spec_to_hf_config(s);
  j["name"] = s.name;
  j["total_params"] = s.total_params();
  return j;
}

}  // namespace realign
