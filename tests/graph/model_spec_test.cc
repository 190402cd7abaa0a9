#include "graph/model_spec.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(ModelSpec, Llama2_7bParameterCountByHand) {
  const ModelSpec s = builtin_model("llama2-7b");
  // Per layer: q,k,v,o 4 * 4096^2; SwiGLU 3 * 4096 * 11008; two RMSNorms 2 * 4096.
  const int64_t layer = 4LL * 4096 * 4096 + 3LL * 4096 * 11008 + 2 * 4096;
  const int64_t total = 32 * layer + 32000LL * 4096 /*embed*/ + 4096 /*final norm*/ + 32000LL * 4096 /*head*/;
  EXPECT_EQ(s.params_per_layer(), layer);
  EXPECT_EQ(s.total_params(), total);
  EXPECT_EQ(s.total_params(), 6738415616LL);  // the published LLaMA-2-7B count
}

TEST(ModelSpec, PublishedCountsOfOtherBuiltins) {
  EXPECT_EQ(builtin_model("llama2-70b").total_params(), 68976648192LL);
  EXPECT_EQ(builtin_model("llama3-8b").total_params(), 8030261248LL);
  EXPECT_EQ(builtin_model("qwen2.5-7b").total_params(), 7615616512LL);
  EXPECT_EQ(builtin_model("gpt2").total_params(), 124439808LL);
  EXPECT_EQ(builtin_model("qwen2-7b").total_params(), 7615616512LL);  // Qwen2-7B's trunk is Qwen2.5-7B's
  EXPECT_EQ(builtin_model("qwen2.5-math-7b").total_params(), 7615616512LL);
}

// The Qwen3 model cards (huggingface.co/Qwen/Qwen3-*) give each size's parameters and those outside the
// embedding and LM head, rounded; the built-in shapes reproduce both.
TEST(ModelSpec, Qwen3ShapesGiveTheirModelCardsCounts) {
  struct Card {
    const char* name;
    double total_b, non_embedding_b, precision;
  };
  for (const Card& c : {Card{"qwen3-0.6b", 0.6, 0.44, 0.005}, Card{"qwen3-1.7b", 1.7, 1.4, 0.05},
                        Card{"qwen3-4b", 4.0, 3.6, 0.05}, Card{"qwen3-8b", 8.2, 6.95, 0.005},
                        Card{"qwen3-14b", 14.8, 13.2, 0.05}, Card{"qwen3-32b", 32.8, 31.2, 0.05}}) {
    SCOPED_TRACE(c.name);
    const ModelSpec s = builtin_model(c.name);
    const int64_t head = s.tied_embeddings ? 0 : s.vocab * s.hidden;
    EXPECT_NEAR(s.total_params() / 1e9, c.total_b, 0.05);
    EXPECT_NEAR((s.total_params() - s.embedding_params() - head) / 1e9, c.non_embedding_b, c.precision);
    EXPECT_TRUE(s.qk_norm);
    EXPECT_FALSE(s.qkv_bias);
  }
  // deepseek-ai/deepseek-llm-7b-base: "7B" (6.9B: 30 layers of 4,096 without GQA, a 102,400 vocabulary).
  EXPECT_NEAR(builtin_model("deepseek-llm-7b").total_params() / 1e9, 6.91, 0.005);
}

TEST(ModelSpec, ForwardFlopsByHand) {
  const ModelSpec s = builtin_model("llama2-7b");
  const double tokens = 1000, context = 512;
  const double matmul_params = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) + 32000.0 * 4096;
  const double attention = 32.0 * 2 * 4096 * context;
  EXPECT_DOUBLE_EQ(s.forward_flops(tokens, context), 2 * tokens * (matmul_params + attention));
}

TEST(ModelSpec, UnknownBuiltinListsKnownNames) {
  try {
    builtin_model("llama9-1t", "models.actor");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "models.actor");
    EXPECT_NE(std::string(e.what()).find("llama2-7b"), std::string::npos);
  }
}

TEST(HfConfig, RoundTripsEveryBuiltin) {
  for (const auto& name : builtin_model_names()) {
    ModelSpec s = builtin_model(name);
    ModelSpec back = model_spec_from_hf_config(model_spec_to_hf_config(s), name);
    back.name = s.name;
    EXPECT_EQ(back, s) << name;
  }
}

TEST(HfConfig, ReadsLlama3RopeScalingAndGqa) {
  Json c = Json::parse(R"({"model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048,
    "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "tie_word_embeddings": true, "torch_dtype": "bfloat16"})");
  ModelSpec s = model_spec_from_hf_config(c, "config.json");
  EXPECT_EQ(s.n_kv_heads, 8);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.rope_scaling.type, "llama3");
  EXPECT_EQ(s.rope_scaling.factor, 32.0);
  EXPECT_TRUE(s.tied_embeddings);
}

TEST(HfConfig, RejectsUnknownArchitectureAndInconsistentHeads) {
  Json c = model_spec_to_hf_config(builtin_model("llama-tiny"));
  c["model_type"] = "bloom";
  EXPECT_THROW(model_spec_from_hf_config(c, "c.json"), Error);
  c = model_spec_to_hf_config(builtin_model("llama-tiny"));
  c["num_key_value_heads"] = 3;
  try {
    model_spec_from_hf_config(c, "c.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("KV heads"), std::string::npos) << e.what();
  }
  c = model_spec_to_hf_config(builtin_model("gpt2-tiny"));
  c["n_head"] = 5;
  EXPECT_THROW(model_spec_from_hf_config(c, "c.json"), Error);
  c.erase("n_head");
  EXPECT_THROW(model_spec_from_hf_config(c, "c.json"), Error);
  EXPECT_THROW(model_spec_from_hf_config(Json::array(), "c.json"), Error);
}

}  // namespace
}  // namespace realign
