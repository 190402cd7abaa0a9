// The built-in shapes beyond LLaMA 2/3, Qwen and DeepSeek-V3: Llama 3.1/3.2, Mistral, Mixtral-8x22B, Gemma
// 2/3, DeepSeek-V2, Qwen2-MoE, Qwen2.5-Math-1.5B and DeepSeek-R1's Qwen distillations. Each is checked
// against its published parameter total and against the hub's config.json read as a user's file would be;
// sliding-window layers are checked where they change cost.
#include <gtest/gtest.h>

#include <tuple>

#include "graph/model_spec.h"
#include "graph/param_layout.h"

namespace realign {
namespace {

// Parameter totals: the hub's safetensors totals (meta-llama, mistralai, google, deepseek-ai, Qwen) where
// published to the parameter, else (marked) computed from the config.json by hand. Gemma 3 4B and up: the
// text decoder only (the hub's total less the SigLIP vision tower's 416,866,032 and the projector's
// 1152 x (hidden + 1)).
TEST(ModelCatalogue, PublishedParameterTotals) {
  const std::pair<const char*, int64_t> totals[] = {
      {"llama3.1-8b", 8030261248LL},
      {"llama3.1-70b", 70553706496LL},
      {"llama3.1-405b", 405853388800LL},
      {"llama3.2-1b", 1235814400LL},
      {"llama3.2-3b", 3212749824LL},
      {"mistral-7b-v0.1", 7241732096LL},
      {"mistral-7b-v0.3", 7248023552LL},
      {"mixtral-8x22b", 140620634112LL},
      {"gemma2-2b", 2614341888LL},
      {"gemma2-9b", 9241705984LL},
      {"gemma2-27b", 27227128320LL},
      {"gemma3-1b", 999885952LL},
      {"gemma3-4b", 4300079472LL - 416866032LL - 1152LL * 2561},
      {"gemma3-12b", 12187325040LL - 416866032LL - 1152LL * 3841},
      {"gemma3-27b", 27432406640LL - 416866032LL - 1152LL * 5377},
      {"deepseek-v2-lite", 15706484224LL},
      {"deepseek-v2", 235741434880LL},
      {"qwen1.5-moe-a2.7b", 14315784192LL},
      {"qwen2-57b-a14b", 57408658944LL},  // computed from Qwen/Qwen2-57B-A14B's config.json
      {"qwen2.5-math-1.5b", 1543714304LL},
      {"deepseek-r1-distill-qwen-1.5b", 1777088000LL},
      {"deepseek-r1-distill-qwen-7b", 7615616512LL},
      {"deepseek-r1-distill-qwen-14b", 14770033664LL},
      {"deepseek-r1-distill-qwen-32b", 32763876352LL},
      {"qwen2-72b", 72706203648LL},
      {"qwen2.5-coder-14b", 14770033664LL},
      {"mistral-nemo-2407", 12247782400LL},
  };
  for (const auto& [name, total] : totals) {
    const ModelSpec s = builtin_model(name);
    EXPECT_EQ(s.total_params(), total) << name;
    int64_t layout = 0;
    for (const ParamInfo& p : model_params(s, HeadKind::kLanguageModel)) layout += p.numel();
    EXPECT_EQ(layout, total) << name;
  }
  // Active parameters per token, as the model cards round them: DeepSeek's cards (V2: 21B, V2-Lite: 2.4B)
  // count them without the input embedding; Qwen's (A2.7B, A14B) and Mistral's (39B) with it.
  const ModelSpec v2 = builtin_model("deepseek-v2"), lite = builtin_model("deepseek-v2-lite");
  EXPECT_NEAR((v2.active_params() - v2.embedding_params()) / 1e9, 21.0, 0.2);
  EXPECT_NEAR((lite.active_params() - lite.embedding_params()) / 1e9, 2.4, 0.06);
  EXPECT_NEAR(builtin_model("qwen1.5-moe-a2.7b").active_params() / 1e9, 2.7, 0.05);
  EXPECT_NEAR(builtin_model("qwen2-57b-a14b").active_params() / 1e9, 14.0, 0.3);
  EXPECT_NEAR(builtin_model("mixtral-8x22b").active_params() / 1e9, 39.0, 0.2);
  // gpt-oss (its model card: 20.91B and 116.83B in all, 3.61B and 5.13B active without the input embedding);
  // its biases and attention sinks (0.04B in the 120B) are not part of the shape.
  for (const auto& [name, total, active] :
       {std::tuple{"gpt-oss-20b", 20.91, 3.61}, std::tuple{"gpt-oss-120b", 116.83, 5.13}}) {
    const ModelSpec s = builtin_model(name);
    EXPECT_NEAR(s.total_params() / 1e9, total, 0.05) << name;
    EXPECT_NEAR((s.active_params() - s.embedding_params()) / 1e9, active, 0.01) << name;
  }
}

TEST(ModelCatalogue, GemmaShapes) {
  const ModelSpec g9 = builtin_model("gemma2-9b");
  EXPECT_EQ(g9.family, ModelFamily::kGemma2);
  EXPECT_EQ(g9.n_heads * g9.head_dim, 4096);  // not the hidden size, 3584
  EXPECT_TRUE(g9.tied_embeddings);
  EXPECT_EQ(g9.vocab, 256000);
  EXPECT_EQ(g9.attention_params(),
            3584LL * 4096 + 2 * 3584LL * 2048 + 4096LL * 3584 + 4 * 3584);  // q, k, v, o; four norms
  const ModelSpec g1 = builtin_model("gemma3-1b");
  EXPECT_TRUE(g1.qk_norm);
  EXPECT_EQ(g1.sliding_window, 512);
  EXPECT_EQ(builtin_model("gemma3-4b").sliding_window, 1024);
  EXPECT_EQ(builtin_model("gemma3-4b").rope_scaling.type, "linear");
  EXPECT_TRUE(builtin_model("llama3.2-1b").tied_embeddings);
  EXPECT_EQ(builtin_model("llama3.2-1b").head_dim, 64);
  EXPECT_EQ(builtin_model("llama3.1-8b").rope_scaling.type, "llama3");
  EXPECT_EQ(builtin_model("mistral-7b-v0.1").sliding_window, 4096);
  EXPECT_EQ(builtin_model("mistral-7b-v0.3").sliding_window, 0);
}

TEST(ModelCatalogue, LocalLayersFollowTheFamilysPattern) {
  std::vector<int64_t> global;
  const ModelSpec g2 = builtin_model("gemma2-2b");
  for (int64_t l = 0; l < 6; ++l)
    if (!g2.sliding_layer(l)) global.push_back(l);
  EXPECT_EQ(global, (std::vector<int64_t>{1, 3, 5}));  // HF Gemma2: layer 0 local, then alternating
  global.clear();
  const ModelSpec g3 = builtin_model("gemma3-27b");
  for (int64_t l = 0; l < g3.n_layers; ++l)
    if (!g3.sliding_layer(l)) global.push_back(l);
  EXPECT_EQ(global.size(), 10u);  // 62 layers: every sixth global
  EXPECT_EQ(global.front(), 5);
  const ModelSpec m = builtin_model("mistral-7b-v0.1");
  for (int64_t l = 0; l < m.n_layers; ++l) EXPECT_TRUE(m.sliding_layer(l));
  EXPECT_FALSE(builtin_model("llama3.1-8b").sliding_layer(0));
}

TEST(ModelCatalogue, WindowsBoundAttentionAndItsCache) {
  const ModelSpec g = builtin_model("gemma3-12b");  // 48 layers, 8 global, window 1024
  EXPECT_DOUBLE_EQ(g.attended_tokens(0, 48, 512), 48 * 512.0);
  EXPECT_DOUBLE_EQ(g.attended_tokens(0, 48, 8192), 8 * 8192.0 + 40 * 1024.0);
  EXPECT_DOUBLE_EQ(g.attended_tokens(0, 6, 8192), 8192.0 + 5 * 1024.0);  // one pipeline stage's six
  ModelSpec full = g;
  full.sliding_window = 0;
  EXPECT_DOUBLE_EQ(full.attended_tokens(0, 48, 8192), 48 * 8192.0);
  // Below the window nothing changes; above it, only the local layers' attention stops growing.
  EXPECT_DOUBLE_EQ(g.forward_flops(1000, 512), full.forward_flops(1000, 512));
  const double local_saving = full.forward_flops(1, 8192) - g.forward_flops(1, 8192);
  const double expected = 2.0 * 2.0 * double(g.n_heads * g.head_dim) * 40 * (8192 - 1024);
  EXPECT_NEAR(local_saving, expected, expected * 1e-9);
}

// The hub's config.json files (google/gemma-2-9b, google/gemma-3-1b-pt, google/gemma-3-4b-pt's as published,
// with only what differs from Gemma3TextConfig's defaults in text_config, ...) read as a user's file.
struct HubConfig {
  const char* builtin;
  const char* json;
};

const HubConfig kHubConfigs[] = {
    {"llama3.1-8b", R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false,
      "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu",
      "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
      "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
      "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192, "rope_type": "llama3"},
      "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
      "vocab_size": 128256})"},
    {"llama3.2-1b", R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false, "head_dim": 64,
      "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 8192, "max_position_embeddings": 131072,
      "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16,
      "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
      "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
      "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16", "vocab_size": 128256})"},
    {"mistral-7b-v0.1", R"({"architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
      "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
      "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "sliding_window": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
      "vocab_size": 32000})"},
    {"mistral-7b-v0.3", R"({"architectures": ["MistralForCausalLM"], "attention_dropout": 0.0,
      "bos_token_id": 1, "eos_token_id": 2, "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
      "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 32768,
      "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "sliding_window": null, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 32768})"},
    {"mixtral-8x22b", R"({"architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0,
      "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 6144,
      "initializer_range": 0.02, "intermediate_size": 16384, "max_position_embeddings": 65536,
      "model_type": "mixtral", "num_attention_heads": 48, "num_experts_per_tok": 2, "num_hidden_layers": 56,
      "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": false, "rms_norm_eps": 1e-05,
      "rope_theta": 1000000, "router_aux_loss_coef": 0.001, "sliding_window": null,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 32000})"},
    {"gemma2-9b", R"({"architectures": ["Gemma2ForCausalLM"], "attention_bias": false,
      "attention_dropout": 0.0, "attn_logit_softcapping": 50.0, "bos_token_id": 2,
      "cache_implementation": "hybrid", "eos_token_id": 1, "final_logit_softcapping": 30.0, "head_dim": 256,
      "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584,
      "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 8192,
      "model_type": "gemma2", "num_attention_heads": 16, "num_hidden_layers": 42, "num_key_value_heads": 8,
      "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
      "sliding_window": 4096, "sliding_window_size": 4096, "torch_dtype": "float32", "use_cache": true,
      "vocab_size": 256000})"},
    {"gemma3-1b", R"({"architectures": ["Gemma3ForCausalLM"], "attention_bias": false,
      "attention_dropout": 0.0, "attn_logit_softcapping": null, "bos_token_id": 2,
      "cache_implementation": "hybrid", "eos_token_id": 1, "final_logit_softcapping": null, "head_dim": 256,
      "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "initializer_range": 0.02,
      "intermediate_size": 6912, "max_position_embeddings": 32768, "model_type": "gemma3_text",
      "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1, "pad_token_id": 0,
      "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000, "rope_scaling": null,
      "rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
      "use_cache": true, "vocab_size": 262144})"},
    {"gemma3-4b", R"({"architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
      "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
      "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
      "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
        "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024},
      "torch_dtype": "bfloat16", "vision_config": {"hidden_size": 1152, "image_size": 896,
        "intermediate_size": 4304, "model_type": "siglip_vision_model", "num_attention_heads": 16,
        "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}})"},
    {"gemma3-27b", R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
      "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
        "model_type": "gemma3_text", "num_attention_heads": 32, "num_hidden_layers": 62,
        "num_key_value_heads": 16, "query_pre_attn_scalar": 168,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
      "vision_config": {"model_type": "siglip_vision_model"}})"},
    {"deepseek-v2-lite", R"({"architectures": ["DeepseekV2ForCausalLM"], "attention_bias": false,
      "attention_dropout": 0.0, "aux_loss_alpha": 0.001, "bos_token_id": 100000, "eos_token_id": 100001,
      "first_k_dense_replace": 1, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
      "intermediate_size": 10944, "kv_lora_rank": 512, "max_position_embeddings": 163840,
      "model_type": "deepseek_v2", "moe_intermediate_size": 1408, "moe_layer_freq": 1, "n_group": 1,
      "n_routed_experts": 64, "n_shared_experts": 2, "norm_topk_prob": false, "num_attention_heads": 16,
      "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16, "pretraining_tp": 1,
      "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06,
      "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                       "original_max_position_embeddings": 4096, "type": "yarn"},
      "rope_theta": 10000, "routed_scaling_factor": 1.0, "scoring_func": "softmax", "seq_aux": true,
      "tie_word_embeddings": false, "topk_group": 1, "topk_method": "greedy", "torch_dtype": "bfloat16",
      "use_cache": true, "v_head_dim": 128, "vocab_size": 102400})"},
    {"deepseek-v2", R"({"architectures": ["DeepseekV2ForCausalLM"], "attention_bias": false,
      "aux_loss_alpha": 0.001, "first_k_dense_replace": 1, "hidden_act": "silu", "hidden_size": 5120,
      "intermediate_size": 12288, "kv_lora_rank": 512, "max_position_embeddings": 163840,
      "model_type": "deepseek_v2", "moe_intermediate_size": 1536, "moe_layer_freq": 1, "n_group": 8,
      "n_routed_experts": 160, "n_shared_experts": 2, "norm_topk_prob": false, "num_attention_heads": 128,
      "num_experts_per_tok": 6, "num_hidden_layers": 60, "num_key_value_heads": 128, "q_lora_rank": 1536,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06,
      "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                       "original_max_position_embeddings": 4096, "type": "yarn"},
      "rope_theta": 10000, "routed_scaling_factor": 16.0, "scoring_func": "softmax", "seq_aux": true,
      "tie_word_embeddings": false, "topk_group": 3, "topk_method": "group_limited_greedy",
      "v_head_dim": 128, "vocab_size": 102400})"},
    {"qwen1.5-moe-a2.7b", R"({"architectures": ["Qwen2MoeForCausalLM"], "attention_dropout": 0.0,
      "decoder_sparse_step": 1, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 2048,
      "initializer_range": 0.02, "intermediate_size": 5632, "max_position_embeddings": 8192,
      "max_window_layers": 21, "model_type": "qwen2_moe", "moe_intermediate_size": 1408,
      "norm_topk_prob": false, "num_attention_heads": 16, "num_experts": 60, "num_experts_per_tok": 4,
      "num_hidden_layers": 24, "num_key_value_heads": 16, "output_router_logits": false, "rms_norm_eps": 1e-06,
      "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 5632,
      "sliding_window": 32768, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
      "use_sliding_window": false, "vocab_size": 151936})"},
    {"qwen2-57b-a14b", R"({"architectures": ["Qwen2MoeForCausalLM"], "attention_dropout": 0.0,
      "bos_token_id": 151643, "decoder_sparse_step": 1, "eos_token_id": 151643, "hidden_act": "silu",
      "hidden_size": 3584, "initializer_range": 0.02, "intermediate_size": 18944,
      "max_position_embeddings": 131072, "max_window_layers": 21, "model_type": "qwen2_moe",
      "moe_intermediate_size": 2560, "norm_topk_prob": false, "num_attention_heads": 28, "num_experts": 64,
      "num_experts_per_tok": 8, "num_hidden_layers": 28, "num_key_value_heads": 4,
      "output_router_logits": false, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
      "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 20480, "sliding_window": 4096,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true, "use_sliding_window": false,
      "vocab_size": 151936})"},
    {"qwen2.5-math-1.5b", R"({"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
      "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 1536,
      "initializer_range": 0.02, "intermediate_size": 8960, "max_position_embeddings": 4096,
      "max_window_layers": 21, "model_type": "qwen2", "num_attention_heads": 12, "num_hidden_layers": 28,
      "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 10000, "sliding_window": 4096,
      "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true, "use_mrope": false,
      "use_sliding_window": false, "vocab_size": 151936})"},
    {"deepseek-r1-distill-qwen-1.5b", R"({"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
      "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 1536,
      "initializer_range": 0.02, "intermediate_size": 8960, "max_position_embeddings": 131072,
      "max_window_layers": 21, "model_type": "qwen2", "num_attention_heads": 12, "num_hidden_layers": 28,
      "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 10000,
      "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
      "use_mrope": false, "use_sliding_window": false, "vocab_size": 151936})"},
    {"deepseek-r1-distill-qwen-14b", R"({"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
      "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 5120,
      "initializer_range": 0.02, "intermediate_size": 13824, "max_position_embeddings": 131072,
      "max_window_layers": 48, "model_type": "qwen2", "num_attention_heads": 40, "num_hidden_layers": 48,
      "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 1000000.0,
      "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
      "use_sliding_window": false, "vocab_size": 152064})"},
    // ByteDance-Seed/Seed-OSS-36B-Instruct config.json (read as Qwen2's layer).
    {"seed-oss-36b", R"({"architectures": ["SeedOssForCausalLM"], "attention_bias": true,
      "attention_out_bias": false, "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
      "intermediate_size": 27648, "max_position_embeddings": 524288, "mlp_bias": false, "model_type": "seed_oss",
      "num_attention_heads": 80, "num_hidden_layers": 64, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
      "rope_scaling": {"rope_type": "default"}, "rope_theta": 10000000.0, "tie_word_embeddings": false,
      "vocab_size": 155136})"},
    // XiaomiMiMo/MiMo-7B-RL config.json (its MTP layer not part of the shape).
    {"mimo-7b", R"({"architectures": ["MiMoForCausalLM"], "attention_bias": true, "attention_dropout": 0.0,
      "bos_token_id": 151643, "eos_token_id": 151645, "hidden_size": 4096, "initializer_range": 0.02,
      "intermediate_size": 11008, "max_position_embeddings": 32768, "model_type": "mimo",
      "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
      "num_nextn_predict_layers": 1, "rms_norm_eps": 1e-05, "rope_theta": 640000.0,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 151680})"},
    // openai/gpt-oss-20b config.json (its layer_types: sliding first, then alternating).
    {"gpt-oss-20b", R"({"architectures": ["GptOssForCausalLM"], "attention_bias": true,
      "attention_dropout": 0.0, "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64,
      "hidden_act": "silu", "hidden_size": 2880, "initial_context_length": 4096, "initializer_range": 0.02,
      "intermediate_size": 2880, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"],
      "max_position_embeddings": 131072, "model_type": "gpt_oss", "num_attention_heads": 64,
      "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 8, "num_local_experts": 32,
      "output_router_logits": false, "pad_token_id": 199999, "rms_norm_eps": 1e-05,
      "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                       "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false},
      "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
      "tie_word_embeddings": false, "use_cache": true, "vocab_size": 201088})"},
};

TEST(ModelCatalogue, HubConfigsMapToTheBuiltins) {
  for (const HubConfig& c : kHubConfigs) {
    ModelSpec read = model_spec_from_hf_config(Json::parse(c.json), "config.json");
    read.name = c.builtin;
    EXPECT_EQ(read, builtin_model(c.builtin)) << c.builtin;
  }
}

// transformers 5 writes which layers are local as layer_types and the RoPE settings as rope_parameters
// (one per attention kind for Gemma 3): the same shape.
TEST(ModelCatalogue, Transformers5LayerTypesAndRopeParameters) {
  Json c = Json::parse(kHubConfigs[6].json);  // gemma-3-1b
  ASSERT_EQ(c["model_type"], "gemma3_text");
  c.erase("sliding_window_pattern");
  c.erase("rope_theta");
  c.erase("rope_scaling");
  c["_sliding_window_pattern"] = 6;
  c["rope_parameters"] = {{"full_attention", {{"rope_theta", 1000000.0}, {"rope_type", "default"}}},
                          {"sliding_attention", {{"rope_theta", 10000.0}, {"rope_type", "default"}}}};
  Json types = Json::array();
  for (int l = 0; l < 26; ++l) types.push_back((l + 1) % 6 == 0 ? "full_attention" : "sliding_attention");
  c["layer_types"] = types;
  ModelSpec s = model_spec_from_hf_config(c, "config.json");
  s.name = "gemma3-1b";
  EXPECT_EQ(s, builtin_model("gemma3-1b"));
  // A local/global plan no pattern describes is refused, naming the field.
  types[0] = "full_attention";
  c["layer_types"] = types;
  try {
    model_spec_from_hf_config(c, "config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "config.json: layer_types");
  }
  // Llama 3.1 as transformers 5 writes it.
  Json l = Json::parse(kHubConfigs[0].json);
  l["rope_parameters"] = l["rope_scaling"];
  l["rope_parameters"]["rope_theta"] = l["rope_theta"];
  l.erase("rope_scaling");
  l.erase("rope_theta");
  ModelSpec ls = model_spec_from_hf_config(l, "config.json");
  ls.name = "llama3.1-8b";
  EXPECT_EQ(ls, builtin_model("llama3.1-8b"));
}

TEST(ModelCatalogue, RefusalsNameTheField) {
  auto path_of = [](const Json& c) -> std::string {
    try {
      model_spec_from_hf_config(c, "config.json");
    } catch (const Error& e) {
      return e.path();
    }
    return "(accepted)";
  };
  Json g = Json::parse(kHubConfigs[5].json);  // gemma-2-9b
  g["hidden_activation"] = "relu";
  EXPECT_EQ(path_of(g), "config.json: hidden_activation");
  Json v2 = Json::parse(kHubConfigs[10].json);  // DeepSeek-V2
  v2["scoring_func"] = "sigmoid";
  EXPECT_EQ(path_of(v2), "config.json: scoring_func");
  v2 = Json::parse(kHubConfigs[10].json);
  v2["topk_method"] = "noaux_tc";
  EXPECT_EQ(path_of(v2), "config.json: topk_method");
  Json l = Json::parse(kHubConfigs[0].json);  // linear RoPE scaling is Gemma 3's, not priced for LLaMA
  l["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(path_of(l), "config.json: rope_scaling");
  Json m = Json::parse(kHubConfigs[7].json);  // a gemma3 config without its text_config
  m.erase("text_config");
  EXPECT_EQ(path_of(m), "config.json: text_config");
  // Seed-OSS read as Qwen2's layer only where its biases are Qwen2's.
  for (const HubConfig& c : kHubConfigs) {
    if (std::string(c.builtin) != "seed-oss-36b") continue;
    Json seed = Json::parse(c.json);
    seed["mlp_bias"] = true;
    EXPECT_EQ(path_of(seed), "config.json: mlp_bias");
    seed = Json::parse(c.json);
    seed["attention_bias"] = false;
    EXPECT_EQ(path_of(seed), "config.json: attention_bias");
  }
}

TEST(ModelCatalogue, RuntimeRefusesWhatItDoesNotBuildByName) {
  for (const char* name : {"gemma2-2b", "gemma3-1b", "gemma3-27b"}) {
    const std::string why = runtime_model_problem(builtin_model(name));
    EXPECT_EQ(why.rfind("family: ", 0), 0u) << why;
    EXPECT_NE(why.find(name), std::string::npos) << why;
  }
  EXPECT_EQ(runtime_model_problem(builtin_model("gpt-oss-20b")).rfind("family: ", 0), 0u);
  for (const char* name : {"deepseek-v2", "deepseek-v2-lite"}) {
    const std::string why = runtime_model_problem(builtin_model(name));
    EXPECT_EQ(why.rfind("mla: ", 0), 0u) << why;
    EXPECT_NE(why.find("deepseek_v2"), std::string::npos) << why;
  }
  for (const char* name :
       {"llama3.1-8b", "llama3.2-1b", "mistral-7b-v0.1", "mistral-7b-v0.3", "mixtral-8x22b",
        "qwen1.5-moe-a2.7b", "qwen2-57b-a14b", "qwen2.5-math-1.5b", "deepseek-r1-distill-qwen-1.5b"})
    EXPECT_EQ(runtime_model_problem(builtin_model(name)), "") << name;
}

}  // namespace
}  // namespace realign
