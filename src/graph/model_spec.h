// ModelSpec: a transformer's architecture and size, shared by the planner (FLOPs, bytes) and the model code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "graph/moe_spec.h"

namespace realign {

// HF model_type per family (Qwen3: Qwen2's trunk without biases, RMSNorm on each head's query and key).
// Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2 and DeepSeek-V3 are mixture-of-experts families. Gemma 2 and
// Gemma 3 (model_type gemma2, gemma3_text; a gemma3 config's text_config) differ from LLaMA in what the
// planner prices by a head_dim apart from hidden / heads, four RMSNorms a layer (before and after attention
// and MLP), a GeGLU MLP (the GEMMs of SwiGLU), tied embeddings, a 256k vocabulary and sliding-window local
// layers; Gemma 3 adds Qwen3's query/key norms. The runtime (src/model) builds neither Gemma nor DeepSeek
// (runtime_model_problem).
enum class ModelFamily {
  kLlama,
  kQwen2,
  kQwen3,
  kMistral,
  kGpt2,
  kMixtral,
  kQwen2Moe,
  kQwen3Moe,
  kDeepseekV3,
  kDeepseekV2,
  kGemma2,
  kGemma3,
  kGptOss
};

std::string to_string(ModelFamily family);
ModelFamily model_family_from_string(const std::string& name, const std::string& path);

// RoPE frequency scaling as in HF's rope_scaling {"rope_type": "llama3", ...}; type "none" when absent.
struct RopeScaling {
  std::string type = "none";  // "none", "llama3", "yarn" (DeepSeek; planner only) or "linear" (Gemma 3)
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
  int64_t sliding_window = 0;  // Mistral, Gemma's local layers; 0 = none
  // Which layers the window bounds: 0 every layer (Mistral); N all but every N-th, layer i global when
  // (i + 1) % N == 0 (HF's sliding_window_pattern: Gemma 2 alternates, 2; Gemma 3 has 5 local to 1 global,
  // 6).
  int64_t sliding_window_pattern = 0;
  bool qk_norm = false;  // Qwen3: an RMSNorm (head_dim weights) on each head's query and key
  MoeSpec moe;           // mixture-of-experts layers (num_experts 0: dense)
  MlaSpec mla;           // DeepSeek's latent attention (kv_lora_rank 0: standard attention)

  bool is_moe() const { return moe.enabled(); }
  // Gemma 2 and 3: RMSNorms after attention and after the MLP as well as before each (four a layer).
  bool post_norms() const { return family == ModelFamily::kGemma2 || family == ModelFamily::kGemma3; }
  // Whether layer `layer` attends only to the last sliding_window tokens (see sliding_window_pattern).
  bool sliding_layer(int64_t layer) const;
  // The tokens layers [begin, end) attend to and cache, summed over the layers, for a sequence of `context`
  // tokens: `context` on a global layer, at most sliding_window on a local one (as FlashAttention's window
  // skips the rest, and as vLLM's hybrid KV cache manager allocates a local layer's cache: "sliding window
  // layers: reserve slots only for the most recent sliding_window_size tokens",
  // docs.vllm.ai/en/latest/design/hybrid_kv_cache_manager; with it disabled vLLM allocates them for every
  // token, as realign's own runtime does).
  double attended_tokens(int64_t begin, int64_t end, double context) const;

  // Parameter counts (not bytes). Embedding and head are counted once when tied.
  int64_t attention_params() const;                // one layer's attention and its norms (two; Gemma four)
  int64_t mlp_params(int64_t layer) const;         // one layer's MLP: every expert, router and shared experts
  int64_t active_mlp_params(int64_t layer) const;  // what one token runs through: router, k experts, shared
  int64_t layer_params(int64_t layer) const;       // attention_params() + mlp_params(layer)
  int64_t params_per_layer() const;                // layer 0's (every layer of a dense model alike)
  int64_t embedding_params() const;                // token (+ learned position) embeddings
  int64_t head_params() const;                     // LM head (0 when tied) + final norm
  int64_t total_params() const;
  int64_t active_params() const;  // per token: total_params() of a dense model

  // Forward FLOPs for `tokens` tokens whose attention spans `context` earlier tokens on average (dense
  // matmuls at 2 FLOPs per multiply-add over the active parameters: attention, router, k routed and the
  // shared experts; attention scores and values included, over at most sliding_window tokens on a local
  // layer; the LM head over the full vocabulary).
  double forward_flops(double tokens, double context) const;
  // Elements of one token's keys and values in one layer's cache on one of `tp` ranks: 2 x kv_heads/tp x
  // head_dim; MLA caches its latent and the rotary key (kv_lora_rank + qk_rope_head_dim), as serving engines
  // do, whole on every tp rank.
  double kv_cache_elements_per_rank(int tp) const;

  bool operator==(const ModelSpec& o) const;
  bool operator!=(const ModelSpec& o) const { return !(*this == o); }
};

// Built-in shapes (model_catalogue.cc, each with the hub repository its config.json is read from):
// llama2-7b/13b/34b/70b, llama3-8b/70b, llama3.1-8b/70b/405b, llama3.2-1b/3b, mistral-7b-v0.1/v0.3,
// qwen2-7b, qwen2.5-0.5b/1.5b/3b/7b/14b/32b/72b, qwen2.5-math-1.5b/7b, deepseek-r1-distill-qwen-1.5b/7b/14b/
// 32b, qwen3-0.6b/1.7b/4b/8b/14b/32b, gemma2-2b/9b/27b, gemma3-1b/4b/12b/27b (text decoders),
// deepseek-llm-7b, gpt2 (124M), gpt2-medium, the mixture-of-experts mixtral-8x7b/8x22b, qwen1.5-moe-a2.7b,
// qwen2-57b-a14b, qwen3-30b-a3b (and -2507), qwen3-235b-a22b, deepseek-v2-lite, deepseek-v2, deepseek-v3,
// gpt-oss-20b/120b; the dense qwen2-72b, qwen2.5-coder-14b, mistral-nemo-2407, seed-oss-36b, mimo-7b; plus
// tiny test models (llama-tiny, llama-small, gpt2-tiny, moe-tiny). Throws Error naming `path` and the known
// names otherwise.
ModelSpec builtin_model(const std::string& name, const std::string& path = "model");
std::vector<std::string> builtin_model_names();

// HF config.json (llama, qwen2, qwen3, mistral, gpt2, gemma2, gemma3_text, gemma3 (its text_config: the
// vision tower is not part of the shape), and the mixture-of-experts mixtral, qwen2_moe, qwen3_moe,
// deepseek_v2, deepseek_v3, gpt_oss model_type; seed_oss and mimo read as qwen2, their layer). Errors name
// `path` (the file) and the field, an unknown mixture-of-experts field or router type included.
ModelSpec model_spec_from_hf_config(const Json& config, const std::string& path);
Json model_spec_to_hf_config(const ModelSpec& spec);

// Checks the shape is self-consistent (heads divide hidden, kv heads divide heads, ...).
void validate_model_spec(const ModelSpec& spec, const std::string& path);

// Empty when realign's runtime (src/model) builds and runs this shape, else why not, naming the ModelSpec
// field: it runs the LLaMA, Qwen2, Qwen3, Mistral and GPT-2 families and the softmax-routed
// mixture-of-experts families (Mixtral, Qwen2-MoE with its gated shared expert, Qwen3-MoE), not Gemma 2 or 3
// (GeGLU, four norms a layer, soft-capped logits, local layers' windows) nor DeepSeek-V2/V3's latent
// attention or their grouped, biased or scaled routing (the planner plans those).
std::string runtime_model_problem(const ModelSpec& spec);

Json to_json(const ModelSpec& spec);

}  // namespace realign
