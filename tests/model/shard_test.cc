// The full <-> shard mapping, deterministic initialisation and HF name mapping.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "model/hf_names.h"
#include "model/init.h"
#include "model/shard.h"
#include "test_util.h"

namespace realign::model {
namespace {

TEST(Shard, RoundTripsEveryParameterIncludingUnevenVocab) {
  ModelSpec s = builtin_model("gpt2-tiny");
  s.vocab = 257;  // 257 tokens over 2 or 4 ranks: uneven slices
  for (ModelSpec spec : {s, builtin_model("llama-tiny")}) {
    auto full = init_full_params(spec, HeadKind::kLanguageModel, 7);
    for (int tp : {1, 2}) {
      for (const ParamInfo& p : model_params(spec, HeadKind::kLanguageModel)) {
        std::vector<at::Tensor> shards;
        int64_t total = 0;
        for (int r = 0; r < tp; ++r) {
          shards.push_back(shard_of(full.at(p.name), p, r, tp));
          EXPECT_EQ(shards.back().sizes().vec(), tp_shard_shape(p, r, tp)) << p.name;
          total += shards.back().numel();
        }
        if (p.split_dim >= 0) {
          EXPECT_EQ(total, p.numel()) << p.name;
        }
        EXPECT_TRUE(at::equal(unshard(shards, p), full.at(p.name))) << p.name << " tp " << tp;
      }
    }
  }
  const ParamInfo embed = model_params(s, HeadKind::kLanguageModel)[0];
  EXPECT_EQ(tp_shard_shape(embed, 0, 2)[0], 128);
  EXPECT_EQ(tp_shard_shape(embed, 1, 2)[0], 129);
}

TEST(Shard, ColumnSplitKeepsWholeHeads) {
  const ModelSpec spec = builtin_model("llama-tiny");  // 4 heads of 16, 2 KV heads
  auto full = init_full_params(spec, HeadKind::kLanguageModel, 1);
  for (const ParamInfo& p : model_params(spec, HeadKind::kLanguageModel)) {
    if (p.name != "layers.0.attn.k.weight") continue;
    at::Tensor s1 = shard_of(full.at(p.name), p, 1, 2);
    EXPECT_EQ(s1.sizes().vec(), (std::vector<int64_t>{16, 64}));
    EXPECT_TRUE(at::equal(s1, full.at(p.name).narrow(0, 16, 16)));
  }
}

TEST(Init, DeterministicPerNameAndLayoutIndependent) {
  const ModelSpec spec = builtin_model("llama-tiny");
  auto a = init_full_params(spec, HeadKind::kLanguageModel, 42);
  auto b = init_full_params(spec, HeadKind::kLanguageModel, 42);
  auto c = init_full_params(spec, HeadKind::kLanguageModel, 43);
  for (const auto& [name, t] : a) {
    EXPECT_TRUE(at::equal(t, b.at(name))) << name;
    if (name.find("norm") == std::string::npos) {
      EXPECT_FALSE(at::equal(t, c.at(name))) << name;
    }
  }
  // Two layers' q weights differ although their shapes match: the name is part of the seed.
  EXPECT_FALSE(at::equal(a.at("layers.0.attn.q.weight"), a.at("layers.1.attn.q.weight")));
  EXPECT_NEAR(a.at("layers.0.mlp.up.weight").std().item<double>(), 0.02, 0.002);
  for (int tp : {1, 2}) {
    for (int pp : {1, 2}) {
      for (int stage = 0; stage < pp; ++stage) {
        for (int r = 0; r < tp; ++r) {
          auto mine = init_rank_params(spec, HeadKind::kLanguageModel, 42, r, tp, stage, pp);
          size_t held = 0;
          for (const ParamInfo& p : model_params(spec, HeadKind::kLanguageModel)) {
            if (!stage_holds(p, stage, pp, spec.n_layers)) continue;
            ++held;
            ASSERT_TRUE(mine.count(p.name)) << p.name;
            EXPECT_TRUE(at::equal(mine.at(p.name), shard_of(a.at(p.name), p, r, tp))) << p.name;
          }
          EXPECT_EQ(mine.size(), held);
        }
      }
    }
  }
}

TEST(HfNames, LlamaOneToOne) {
  const ModelSpec spec = builtin_model("llama-tiny");
  EXPECT_EQ(hf_source(spec, "layers.1.attn.q.weight").name, "model.layers.1.self_attn.q_proj.weight");
  EXPECT_EQ(hf_source(spec, "layers.0.mlp_norm.weight").name, "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(hf_source(spec, "embed.weight").name, "model.embed_tokens.weight");
  EXPECT_EQ(hf_source(spec, "final_norm.weight").name, "model.norm.weight");
  EXPECT_THROW(hf_source(spec, "layers.0.attn.c_attn.weight"), Error);
}

TEST(HfNames, Gpt2FusesQkvAndTransposesConv1D) {
  const ModelSpec spec = builtin_model("gpt2-tiny");
  auto full = init_full_params(spec, HeadKind::kLanguageModel, 3);
  auto hf = to_hf_tensors(spec, full);
  EXPECT_EQ(hf.at("transformer.h.0.attn.c_attn.weight").sizes().vec(), (std::vector<int64_t>{64, 192}));
  EXPECT_EQ(hf.at("transformer.h.0.attn.c_attn.bias").sizes().vec(), (std::vector<int64_t>{192}));
  EXPECT_EQ(hf.at("transformer.h.1.mlp.c_fc.weight").sizes().vec(), (std::vector<int64_t>{64, 256}));
  EXPECT_EQ(hf.count("lm_head.weight"), 0u);  // tied
  // c_attn columns [64, 128) are k, as a Linear's rows.
  EXPECT_TRUE(at::equal(hf.at("transformer.h.0.attn.c_attn.weight").narrow(1, 64, 64).t(),
                        full.at("layers.0.attn.k.weight")));
  for (const auto& [name, t] : full) {
    const HfSource s = hf_source(spec, name);
    EXPECT_TRUE(at::equal(canonical_from_hf(s, hf.at(s.name)), t)) << name;
  }
  EXPECT_EQ(strip_gpt2_prefix("transformer.wte.weight"), "wte.weight");
}

}  // namespace
}  // namespace realign::model
