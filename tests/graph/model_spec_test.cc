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
