// ModelSpec: a transformer's architecture and size, shared by the planner (FLOPs, bytes) and the model code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"

namespace realign {

enum class ModelFamily { kLlama, kQwen2, kMistral, kGpt2 };

std::string to_string(ModelFamily family);
ModelFamily model_family_from_string(const std::string& name, const std::string& path);

// RoPE frequency scaling as in HF's rope_scaling {"rope_type": "llama3", ...}; type "none" when absent.
struct RopeScaling {
  std::string type = "none";  // "none" or "llama3"
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

  // Parameter counts (not bytes). Embedding and head are counted once when tied.
  int64_t params_per_layer() const;
  int64_t embedding_params() const;  // token (+ learned position) embeddings
  int64_t head_params() const;       // LM head (0 when tied) + final norm
  int64_t total_params() const;

  // Forward FLOPs for `tokens` tokens whose attention spans `context` earlier tokens on average (dense matmuls
  // at 2 FLOPs per multiply-add; attention scores and values included; the LM head over the full vocabulary).
  double forward_flops(double tokens, double context) const;

  bool operator==(const ModelSpec& o) const;
  bool operator!=(const ModelSpec& o) const { return !(*this == o); }
};

// Built-in shapes: llama2-7b/13b/34b/70b, llama3-8b/70b, qwen2.5-0.5b/1.5b/3b/7b/14b/32b/72b, gpt2 (124M),
// plus tiny test models (llama-tiny, gpt2-tiny). Throws Error naming `path` and the known names otherwise.
ModelSpec builtin_model(const std::string& name, const std::string& path = "model");
std::vector<std::string> builtin_model_names();

// HF config.json (llama, qwen2, mistral, gpt2 model_type). Errors name `path` (the file) and the field.
ModelSpec model_spec_from_hf_config(const Json& config, const std::string& path);
Json model_spec_to_hf_config(const ModelSpec& spec);

// Checks the shape is self-consistent (heads divide hidden, kv heads divide heads, ...).
void validate_model_spec(const ModelSpec& spec, const std::string& path);

Json to_json(const ModelSpec& spec);

}  // namespace realign
