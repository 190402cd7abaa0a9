// Mixture-of-experts shapes: parameter counts against the published totals, the layers that are MoE, and
// HF config.json mapping with its refusals.
#include <gtest/gtest.h>

#include "graph/model_spec.h"
#include "graph/param_layout.h"

namespace realign {
namespace {

// Qwen/Qwen3-30B-A3B's config.json as published (the fields transformers' Qwen3MoeConfig reads).
Json qwen3_30b_config() {
  return Json::parse(R"({
    "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 151643, "decoder_sparse_step": 1, "eos_token_id": 151645, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 6144,
    "max_position_embeddings": 40960, "max_window_layers": 48, "mlp_only_layers": [], "model_type": "qwen3_moe",
    "moe_intermediate_size": 768, "norm_topk_prob": true, "num_attention_heads": 32, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 4, "output_router_logits": false,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
    "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0", "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})");
}

// deepseek-ai/DeepSeek-V3's config.json (quantization_config and auto_map left out).
Json deepseek_v3_config() {
  return Json::parse(R"({
    "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 0, "eos_token_id": 1, "ep_size": 1, "first_k_dense_replace": 3, "hidden_act": "silu",
    "hidden_size": 7168, "initializer_range": 0.02, "intermediate_size": 18432, "kv_lora_rank": 512,
    "max_position_embeddings": 163840, "model_type": "deepseek_v3", "moe_intermediate_size": 2048,
    "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": true,
    "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
    "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}, "rope_theta": 10000,
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "seq_aux": true, "tie_word_embeddings": false,
    "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "transformers_version": "4.33.1",
    "use_cache": true, "v_head_dim": 128, "vocab_size": 129280})");
}

Json mixtral_config() {
  return Json::parse(R"({
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "output_router_logits": false, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02,
    "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
    "vocab_size": 32000})");
}

std::string error_path(const Json& config) {
  try {
    model_spec_from_hf_config(config, "config.json");
  } catch (const Error& e) {
    return e.path();
  }
  return "(accepted)";
}

TEST(MoeSpec, Qwen3_30bA3bCountsByHand) {
  const ModelSpec s = builtin_model("qwen3-30b-a3b");
  // Attention: q 4096 x 2048, k and v 512 x 2048 each, o 2048 x 4096, q/k norms 128 each, two RMSNorms.
  const int64_t attention = 2048LL * (4096 + 1024) + 4096LL * 2048 + 256 + 2 * 2048;
  const int64_t router = 128LL * 2048, expert = 3LL * 2048 * 768;
  const int64_t outside = 2 * 151936LL * 2048 + 2048;  // embedding, LM head, final norm
  EXPECT_EQ(s.layer_params(0), attention + router + 128 * expert);
  EXPECT_EQ(s.total_params(), 48 * (attention + router + 128 * expert) + outside);
  EXPECT_EQ(s.active_params(), 48 * (attention + router + 8 * expert) + outside);
  EXPECT_EQ(s.total_params(), 30532122624LL);  // Qwen's model card: 30.5B total
  EXPECT_EQ(s.active_params(), 3353032704LL);  // 3.3B activated
}

TEST(MoeSpec, PublishedTotalAndActiveCounts) {
  auto near = [](int64_t n, double published, double tol) {
    return std::abs(double(n) / published - 1) < tol;
  };
  const ModelSpec mixtral = builtin_model("mixtral-8x7b");  // Mistral AI: 46.7B total, 12.9B per token
  EXPECT_TRUE(near(mixtral.total_params(), 46.7e9, 0.002)) << mixtral.total_params();
  EXPECT_TRUE(near(mixtral.active_params(), 12.9e9, 0.002)) << mixtral.active_params();
  const ModelSpec q235 = builtin_model("qwen3-235b-a22b");  // Qwen: 235B total, 22B activated
  EXPECT_TRUE(near(q235.total_params(), 235e9, 0.005)) << q235.total_params();
  EXPECT_TRUE(near(q235.active_params(), 22e9, 0.03)) << q235.active_params();
  const ModelSpec dsv3 = builtin_model("deepseek-v3");  // DeepSeek-V3 report: 671B total, 37B activated
  EXPECT_TRUE(near(dsv3.total_params(), 671e9, 0.005)) << dsv3.total_params();
  // 37.55B here, counting the embedding and the LM head (0.93B each); the report's 37B is a round figure.
  EXPECT_TRUE(near(dsv3.active_params(), 37e9, 0.02)) << dsv3.active_params();
}

TEST(MoeSpec, WhichLayersAreMoe) {
  MoeSpec m;
  m.num_experts = 4;
  m.first_dense_layers = 1;
  m.sparse_step = 2;
  m.dense_layers = {5};
  // (i + 1) % 2 == 0: 1, 3, 5, 7; not below 1; not 5.
  std::vector<int64_t> moe;
  for (int64_t l = 0; l < 8; ++l)
    if (m.is_moe_layer(l)) moe.push_back(l);
  EXPECT_EQ(moe, (std::vector<int64_t>{1, 3, 7}));
  EXPECT_EQ(m.moe_layers_in(0, 8), 3);
  EXPECT_EQ(builtin_model("deepseek-v3").moe.moe_layers_in(0, 61), 58);
}

TEST(MoeSpec, ParamLayoutSumsToTheCountsAndSplitsExpertsOverEp) {
  const ModelSpec s = builtin_model("qwen3-30b-a3b");
  int64_t experts = 0;
  for (const ParamInfo& p : model_params(s, HeadKind::kLanguageModel)) {
    if (!p.expert) continue;
    experts += p.numel();
    EXPECT_EQ(p.shape[size_t(p.split_dim)], 768) << p.name;  // with ep 1, tp cuts the inner dimension
    EXPECT_EQ(ep_shard_range(p, 3, 8), (Range{48, 64})) << p.name;
  }
  EXPECT_EQ(experts, 48LL * 128 * 3 * 2048 * 768);
}

TEST(MoeSpec, HfConfigsMapToTheBuiltins) {
  ModelSpec q = model_spec_from_hf_config(qwen3_30b_config(), "config.json");
  q.name = "qwen3-30b-a3b";
  EXPECT_EQ(q, builtin_model("qwen3-30b-a3b"));
  ModelSpec d = model_spec_from_hf_config(deepseek_v3_config(), "config.json");
  d.name = "deepseek-v3";
  EXPECT_EQ(d, builtin_model("deepseek-v3"));
  ModelSpec m = model_spec_from_hf_config(mixtral_config(), "config.json");
  m.name = "mixtral-8x7b";
  EXPECT_EQ(m, builtin_model("mixtral-8x7b"));
}

TEST(MoeSpec, HfRoundTripOfEveryMoeBuiltin) {
  for (const char* name : {"mixtral-8x7b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3", "moe-tiny"}) {
    const ModelSpec s = builtin_model(name);
    ModelSpec back = model_spec_from_hf_config(model_spec_to_hf_config(s), "config.json");
    back.name = s.name;
    EXPECT_EQ(back, s) << name;
  }
}

TEST(MoeSpec, Qwen2MoeSharedExpertBehindAGate) {
  Json c = qwen3_30b_config();
  c["model_type"] = "qwen2_moe";
  c.erase("head_dim");
  c["shared_expert_intermediate_size"] = 5632;
  c["norm_topk_prob"] = false;
  const ModelSpec s = model_spec_from_hf_config(c, "config.json");
  EXPECT_EQ(s.moe.shared_experts, 1);
  EXPECT_TRUE(s.moe.shared_expert_gate);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_EQ(describe_router(s.moe), "softmax, top-8 of 128");
  EXPECT_EQ(describe_router(builtin_model("deepseek-v3").moe),
            "sigmoid + bias, top-8 of 256 in the best 4 of 8 groups, renormalised, x2.5");
}

// A config.json without norm_topk_prob routes as transformers' defaults do (Qwen2MoeConfig and
// Qwen3MoeConfig: norm_topk_prob=False): the top-k softmax weights are not renormalised.
TEST(MoeSpec, QwenMoeNormTopkProbDefaultsToFalseAsInTransformers) {
  for (const char* type : {"qwen3_moe", "qwen2_moe"}) {
    Json c = qwen3_30b_config();
    c["model_type"] = type;
    if (std::string(type) == "qwen2_moe") c.erase("head_dim");
    c.erase("norm_topk_prob");
    EXPECT_FALSE(model_spec_from_hf_config(c, "config.json").moe.normalize_top_k) << type;
    c["norm_topk_prob"] = true;
    EXPECT_TRUE(model_spec_from_hf_config(c, "config.json").moe.normalize_top_k) << type;
  }
}

TEST(MoeSpec, RefusalsNameTheField) {
  Json c = qwen3_30b_config();
  c["moe_capacity_factor"] = 1.25;  // not a Qwen3-MoE field
  EXPECT_EQ(error_path(c), "config.json: moe_capacity_factor");
  c = qwen3_30b_config();
  c["num_experts_per_tok"] = 200;
  EXPECT_EQ(error_path(c), "config.json: num_experts_per_tok");
  c = qwen3_30b_config();
  c.erase("moe_intermediate_size");
  EXPECT_EQ(error_path(c), "config.json");  // "config.json lacks \"moe_intermediate_size\""
  Json d = deepseek_v3_config();
  d["topk_method"] = "group_limited_greedy";  // DeepSeek-V2's router
  EXPECT_EQ(error_path(d), "config.json: topk_method");
  d = deepseek_v3_config();
  d["scoring_func"] = "softmax";
  EXPECT_EQ(error_path(d), "config.json: scoring_func");
  d = deepseek_v3_config();
  d["moe_layer_freq"] = 2;
  EXPECT_EQ(error_path(d), "config.json: moe_layer_freq");
  Json llama = mixtral_config();
  llama["model_type"] = "llama";
  EXPECT_EQ(error_path(llama), "config.json: num_local_experts");
}

}  // namespace
}  // namespace realign
