// The decode step with the KV cache's fixed shapes (KvCache::write_slots: what model/decode_graph.h records
// as a CUDA graph) against the growing shapes generate() uses on the CPU: the same hidden states and tokens,
// step after step, with left-padded rows, a sliding window and grouped KV heads. The recording itself needs a
// GPU (scripts/gpu-check.sh); here DecodeGraph must say why it is unavailable.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include "model/decode_graph.h"
#include "model/generate.h"
#include "test_util.h"

namespace realign::model {
namespace {

using testing::compare;
using testing::make_model;
using testing::random_sequences;

TEST(FixedShapeDecode, StepsEqualTheGrowingShapes) {
  // llama-tiny has 4 query heads over 2 KV heads; Mistral's window is 5 slots.
  for (const ModelSpec& spec : {testing::llama_scaled_tiny(), builtin_model("gpt2-tiny"), testing::qwen2_tiny(), testing::mistral_tiny()}) {
    SCOPED_TRACE(spec.name);
    Transformer m = make_model(spec, HeadKind::kLanguageModel, 41);
    c10::NoGradGuard no_grad;
    const PaddedPrompts p = left_pad(random_sequences(spec.vocab, {3, 8, 1, 5}, 12));
    const int64_t steps = 9, capacity = p.length() + steps + 3;  // slots left unwritten at the end
    KvCache growing = m.make_cache(4, capacity), fixed = m.make_cache(4, capacity);
    at::Tensor h_grow = m.forward_cached(p.tokens, p.positions, p.valid, growing);
    at::Tensor h_fixed = m.forward_cached(p.tokens, p.positions, p.valid, fixed);
    GenerateOptions o;
    o.max_new_tokens = steps;
    DecodeRows rows(p, o, at::kCPU);
    for (int64_t s = 0; s < steps; ++s) {
      SCOPED_TRACE("step " + std::to_string(s));
      const at::Tensor tokens = m.logits(h_grow.narrow(1, h_grow.size(1) - 1, 1)).squeeze(1).argmax(-1);
      ASSERT_TRUE(at::equal(tokens, m.logits(h_fixed.narrow(1, h_fixed.size(1) - 1, 1)).squeeze(1).argmax(-1)));
      rows.record(tokens, at::Tensor());
      if (rows.finished()) break;
      const DecodeRows::Step in = rows.next_step();
      h_grow = m.forward_cached(in.tokens, in.positions, in.valid, growing);
      fixed.write_slots = at::full({1}, fixed.length, at::kLong);
      h_fixed = m.forward_cached(in.tokens, in.positions, in.valid, fixed);
      fixed.write_slots = at::Tensor();
      ASSERT_EQ(fixed.length, growing.length);
      ASSERT_EQ(compare(h_fixed, h_grow, 1e-5, 1e-5), "");
    }
    ASSERT_TRUE(at::equal(fixed.valid, growing.valid));
    for (size_t l = 0; l < growing.k.size(); ++l) ASSERT_EQ(compare(fixed.k[l], growing.k[l], 1e-6, 1e-6), "");
  }
}

TEST(FixedShapeDecode, GraphsAreUnavailableOnTheCpu) {
  Transformer m = make_model(builtin_model("llama-tiny"), HeadKind::kLanguageModel, 42);
  EXPECT_FALSE(DecodeGraph::unavailable_because(m).empty());
  KvCache cache = m.make_cache(2, 8);
  EXPECT_EQ(DecodeGraph::make(m, cache), nullptr);
}

}  // namespace
}  // namespace realign::model
