// ModelSpec: a transformer's architecture and size, shared by the planner (FLOPs, bytes) and the model code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "graph/moe_spec.h"

namespace realign {

// HF model_type per family (Qwen3: Qwen2's trunk without biases, RMSNorm on each head's query and key); the
// last four are mixture-of-experts families, which the planner prices and the runtime does not run yet.
enum class ModelFamily {
  kLlama,
  kQwen2,
  kQwen3,
  kMistral,
  kGpt2,
  kMixtral,
  kQwen2Moe,
  kQwen3Moe,
  kDeepseekV3
};

std::string to_string(ModelFamily family);
ModelFamily model_family_from_string(const std::string& name, const std::string& path);

// RoPE frequency scaling as in HF's rope_scaling {"rope_type": "llama3", ...}; type "none" when absent.
struct RopeScaling {
  std::string type = "none";  // "none", "llama3", or "yarn" (DeepSeek-V3; planner only)
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position = 8192;
  bool operator==(const RopeScaling& o) const;
};

struct ModelSpec {
  std::string name;  // "llama2-7b" or the config's path
  ModelFamily family = ModelFamily::kLlama;
  int64_t n_layers = 0;
  int64_t hidden = 0;        // d_model
  int64_t intermediate = 0;  // MLP inner size (SwiGLU: per gate/up; GPT-2: 4*hidden)
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // == n_heads without GQA
  int64_t head_dim = 0;    // usually hidden / n_heads
  int64_t vocab = 0;
  int64_t max_positions = 0;
  bool tied_embeddings = false;  // GPT-2, small Qwen2.5
  bool qkv_bias = false;         // Qwen2, GPT-2 (GPT-2 biases every linear)
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  int64_t sliding_window = 0;  // Mistral; 0 = none
  bool qk_norm = false;        // Qwen3: an RMSNorm (head_dim weights) on each head's query and key
  MoeSpec moe;                 // mixture-of-experts layers (num_experts 0: dense)
  MlaSpec mla;                 // DeepSeek's latent attention (kv_lora_rank 0: standard attention)

  bool is_moe() const { return moe.enabled(); }

  // Parameter counts (not bytes). Embedding and head are counted once when tied.
  int64_t attention_params() const;                // one layer's attention and its two norms
  int64_t mlp_params(int64_t layer) const;         // one layer's MLP: every expert, router and shared experts
  int64_t active_mlp_params(int64_t layer) const;  // what one token runs through: router, k experts, shared
  int64_t layer_params(int64_t layer) const;       // attention_params() + mlp_params(layer)
  int64_t params_per_layer() const;                // layer 0's (every layer of a dense model alike)
  int64_t embedding_params() const;  // token (+ learned position) embeddings
  int64_t head_params() const;       // LM head (0 when tied) + final norm
  int64_t total_params() const;
  int64_t active_params() const;  // per token: total_params() of a dense model

  // Forward FLOPs for `tokens` tokens whose attention spans `context` earlier tokens on average (dense
  // matmuls at 2 FLOPs per multiply-add over the active parameters: attention, router, k routed and the
  // shared experts; attention scores and values included; the LM head over the full vocabulary).
  double forward_flops(double tokens, double context) const;
  // Elements of one token's keys and values in one layer's cache on one of `tp` ranks: 2 x kv_heads/tp x
  // head_dim; MLA caches its latent and the rotary key (kv_lora_rank + qk_rope_head_dim), as serving engines
  // do, whole on every tp rank.
  double kv_cache_elements_per_rank(int tp) const;

  bool operator==(const ModelSpec& o) const;
  bool operator!=(const ModelSpec& o) const { return !(*this == o); }
};

// Built-in shapes: llama2-7b/13b/34b/70b, llama3-8b/70b, qwen2-7b, qwen2.5-0.5b/1.5b/3b/7b/14b/32b/72b,
// qwen2.5-math-7b, qwen3-0.6b/1.7b/4b/8b/14b/32b, deepseek-llm-7b, gpt2 (124M), the mixture-of-experts
// mixtral-8x7b, qwen3-30b-a3b, qwen3-235b-a22b, deepseek-v3, plus tiny test models (llama-tiny, gpt2-tiny,
// moe-tiny). Throws Error naming `path` and the known names otherwise.
ModelSpec builtin_model(const std::string& name, const std::string& path = "model");
std::vector<std::string> builtin_model_names();

// HF config.json (llama, qwen2, qwen3, mistral, gpt2, and the mixture-of-experts mixtral, qwen2_moe,
// qwen3_moe, deepseek_v3 model_type). Errors name `path` (the file) and the field, an unknown
// mixture-of-experts field or router type included.
ModelSpec model_spec_from_hf_config(const Json& config, const std::string& path);
Json model_spec_to_hf_config(const ModelSpec& spec);

// Checks the shape is self-consistent (heads divide hidden, kv heads divide heads, ...).
void validate_model_spec(const ModelSpec& spec, const std::string& path);

// Empty when realign's runtime (src/model) builds and runs this shape, else why not, naming the ModelSpec
// field: it runs the dense families and the softmax-routed mixture-of-experts families (Mixtral, Qwen2-MoE
// with its gated shared expert, Qwen3-MoE), not DeepSeek-V3's latent attention or its sigmoid, grouped,
// biased or scaled routing (the planner plans those).
std::string runtime_model_problem(const ModelSpec& spec);

Json to_json(const ModelSpec& spec);

}  // namespace realign
