#include "graph/param_layout.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

int64_t total_numel(const std::vector<ParamInfo>& ps) {
  int64_t n = 0;
  for (const auto& p : ps) n += p.numel();
  return n;
}

TEST(ParamLayout, CountsMatchModelSpec) {
  for (const auto& name : builtin_model_names()) {
    const ModelSpec s = builtin_model(name);
    EXPECT_EQ(total_numel(model_params(s, HeadKind::kLanguageModel)), s.total_params()) << name;
  }
}

TEST(ParamLayout, TpShardsTileEveryParameterExactly) {
  const ModelSpec s = builtin_model("gpt2-tiny");  // vocab 256, 4 heads
  for (int tp : {1, 2, 4}) {
    for (const auto& p : model_params(s, HeadKind::kLanguageModel)) {
      int64_t covered = 0, expect_begin = 0;
      for (int r = 0; r < tp; ++r) {
        const Range range = tp_shard_range(p, r, tp);
        if (p.split_dim < 0) {
          EXPECT_EQ(range.size(), p.shape[0]);
          continue;
        }
        EXPECT_EQ(range.begin, expect_begin) << p.name;
        EXPECT_EQ(range.size() % p.split_unit, 0) << p.name;
        expect_begin = range.end;
        covered += range.size();
      }
      if (p.split_dim >= 0) {
        EXPECT_EQ(covered, p.shape[p.split_dim]) << p.name;
      }
    }
  }
}

TEST(ParamLayout, UnevenVocabularySplit) {
  ModelSpec s = builtin_model("gpt2");  // 50257 tokens
  const auto ps = model_params(s, HeadKind::kLanguageModel);
  EXPECT_EQ(tp_shard_range(ps[0], 0, 2), (Range{0, 25128}));
  EXPECT_EQ(tp_shard_range(ps[0], 1, 2), (Range{25128, 50257}));
}

TEST(ParamLayout, HeadsSplitInWholeHeads) {
  const ModelSpec s = builtin_model("llama-tiny");  // 4 heads of 16, 2 KV heads
  const auto ps = model_params(s, HeadKind::kLanguageModel);
  for (const auto& p : ps)
    if (p.name == "layers.0.attn.k.weight") {
      EXPECT_EQ(tp_shard_range(p, 1, 2), (Range{16, 32}));
    }
  EXPECT_EQ(tp_incompatibility(s, 4), "tp 4 does not divide 2 KV heads");
  EXPECT_EQ(tp_incompatibility(s, 2), "");
}

TEST(ParamLayout, StagesHoldEachLayerOnceAndTiedEmbeddingTwice) {
  const ModelSpec s = builtin_model("gpt2-tiny");
  const auto ps = model_params(s, HeadKind::kLanguageModel);
  for (int pp : {1, 2}) {
    for (const auto& p : ps) {
      int holders = 0;
      for (int st = 0; st < pp; ++st) holders += stage_holds(p, st, pp, s.n_layers);
      EXPECT_EQ(holders, p.tied_to_head && pp > 1 ? 2 : 1) << p.name << " pp=" << pp;
    }
  }
}

TEST(ParamLayout, ValueHeadReplacesLmHead) {
  const auto ps = model_params(builtin_model("llama-tiny"), HeadKind::kValue);
  bool has_value = false, has_lm = false;
  for (const auto& p : ps) {
    has_value |= p.name == "value_head.weight";
    has_lm |= p.name == "lm_head.weight";
  }
  EXPECT_TRUE(has_value);
  EXPECT_FALSE(has_lm);
}

}  // namespace
}  // namespace realign
