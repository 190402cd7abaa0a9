// The check runner's own pieces: synthetic slices agree with slices of the whole, and a corrupted shard is
// reported (so the multi-process tests can fail).
#include "realloc/realloc_check.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(ReallocCheck, SyntheticSlicesAreSlicesOfTheWhole) {
  const ModelSpec spec = builtin_model("llama-tiny");
  const SliceSource source = synthetic_params(9);
  for (const ParamInfo& p : model_params(spec, HeadKind::kLanguageModel)) {
    const int dim = slice_dim(p);
    const at::Tensor whole = source(p, Range{0, p.shape[size_t(dim)]}, at::kFloat);
    const Range r{p.shape[size_t(dim)] / 3, p.shape[size_t(dim)] - 1};
    EXPECT_TRUE(at::equal(source(p, r, at::kFloat), whole.narrow(dim, r.begin, r.size()))) << p.name;
    EXPECT_TRUE(at::equal(source(p, r, at::kBFloat16), whole.narrow(dim, r.begin, r.size()).to(at::kBFloat16)))
        << p.name;
  }
}

TEST(ReallocCheck, CorruptedOrMissingShardsAreReported) {
  const ModelSpec spec = builtin_model("gpt2-tiny");
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  const SliceSource source = synthetic_params(1);
  const Layout layout = parse_layout("d1t2p2");
  ShardMap shards = make_shards(params, spec.n_layers, layout, 3, source, at::kBFloat16);
  EXPECT_TRUE(verify_shards(params, spec.n_layers, layout, 3, shards, source, at::kBFloat16).empty());
  shards.begin()->second.reshape({-1})[5] = 1000.0;
  auto bad = verify_shards(params, spec.n_layers, layout, 3, shards, source, at::kBFloat16);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("first differing element (flat index in the shard) 5"), std::string::npos) << bad[0];
  shards.erase(shards.begin());
  bad = verify_shards(params, spec.n_layers, layout, 3, shards, source, at::kBFloat16);
  EXPECT_NE(bad[0].find("missing"), std::string::npos) << bad[0];
}

}  // namespace
}  // namespace realign
