// Single-rank transformer: forward/backward sanity for every family, log-probs against log_softmax of the
// logits, padded vs packed batches, the value head, bf16.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/token_batch.h"
#include "model/transformer.h"
#include "test_util.h"

namespace realign::model {
namespace {

using testing::compare;
using testing::make_model;
using testing::random_sequences;

std::vector<ModelSpec> families() {
  return {testing::llama_scaled_tiny(), builtin_model("gpt2-tiny"), testing::qwen2_tiny(), testing::mistral_tiny()};
}

TEST(Transformer, ForwardBackwardGivesFiniteGradientsForEveryParameter) {
  for (const ModelSpec& spec : families()) {
    SCOPED_TRACE(spec.name);
    Transformer m = make_model(spec, HeadKind::kLanguageModel, 5);
    BuiltBatch b = pad_batch(random_sequences(spec.vocab, {9, 4, 12}, 1));
    Targets t = next_token_targets(b.batch);
    at::Tensor entropy;
    at::Tensor logp = m.token_logprobs(m.forward(b.batch), t.targets, &entropy);
    EXPECT_EQ(logp.sizes().vec(), (std::vector<int64_t>{3, 12}));
    EXPECT_TRUE(logp.isfinite().all().item<bool>());
    EXPECT_TRUE((logp <= 0).all().item<bool>());
    EXPECT_TRUE((entropy >= 0).all().item<bool>() && (entropy <= std::log(double(spec.vocab)) + 1e-4).all().item<bool>());
    at::Tensor loss = -(logp * t.mask).sum() / t.mask.sum() - 0.01 * (entropy * t.mask).mean();
    loss.backward();
    for (const auto& [name, p] : m.named_params()) {
      ASSERT_TRUE(p.grad().defined()) << name;
      EXPECT_TRUE(p.grad().isfinite().all().item<bool>()) << name;
      EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0) << name;
    }
  }
}

TEST(Transformer, TokenLogprobsAndEntropyMatchLogSoftmaxOfLogits) {
  for (const ModelSpec& spec : families()) {
    SCOPED_TRACE(spec.name);
    Transformer m = make_model(spec, HeadKind::kLanguageModel, 9);
    BuiltBatch b = pad_batch(random_sequences(spec.vocab, {7, 10}, 2));
    Targets t = next_token_targets(b.batch);
    at::Tensor h = m.forward(b.batch);
    at::Tensor logsm = at::log_softmax(m.logits(h).to(at::kDouble), -1);
    at::Tensor want = logsm.gather(-1, t.targets.unsqueeze(-1)).squeeze(-1);
    at::Tensor want_ent = -(logsm.exp() * logsm).sum(-1);
    for (int64_t chunk : {int64_t(1) << 24, int64_t(300)}) {  // 300 elements: one token per chunk
      at::Tensor ent;
      at::Tensor got = m.token_logprobs(h, t.targets, &ent, chunk);
      EXPECT_EQ(compare(got, want, 1e-5, 1e-5), "") << "chunk " << chunk;
      EXPECT_EQ(compare(ent, want_ent, 1e-5, 1e-5), "") << "chunk " << chunk;
    }
  }
}

// Per-sequence log-probs of the sequences packed into rows equal those of one sequence per padded row.
TEST(Transformer, PackedAndPaddedBatchesAgree) {
  for (const ModelSpec& spec : families()) {
    SCOPED_TRACE(spec.name);
    Transformer m = make_model(spec, HeadKind::kLanguageModel, 11);
    auto seqs = random_sequences(spec.vocab, {5, 9, 3, 12, 7, 1}, 3);
    BuiltBatch padded = pad_batch(seqs);
    BuiltBatch packed = pack_batch(seqs, 16);
    EXPECT_LT(packed.batch.tokens.size(0), int64_t(seqs.size()));
    auto logp_of = [&](const BuiltBatch& b) {
      Targets t = next_token_targets(b.batch);
      return m.token_logprobs(m.forward(b.batch), t.targets);
    };
    at::Tensor a = logp_of(padded), c = logp_of(packed);
    for (size_t i = 0; i < seqs.size(); ++i) {
      SequencePlacement pa = padded.placements[i], pc = packed.placements[i];
      pa.length -= 1;  // the last token has no target
      pc.length -= 1;
      EXPECT_EQ(compare(gather_sequence(c, pc), gather_sequence(a, pa), 2e-5, 1e-5), "") << "sequence " << i;
    }
  }
}

TEST(Transformer, ValueHeadOnTheSameTrunk) {
  const ModelSpec spec = builtin_model("llama-tiny");
  Transformer critic = make_model(spec, HeadKind::kValue, 4);
  EXPECT_EQ(critic.named_params().count("lm_head.weight"), 0u);
  BuiltBatch b = pad_batch(random_sequences(spec.vocab, {6, 3}, 4));
  at::Tensor v = critic.values(critic.forward(b.batch));
  EXPECT_EQ(v.sizes().vec(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(v.scalar_type(), at::kFloat);
  v.sum().backward();
  EXPECT_GT(critic.named_params().at("value_head.weight").grad().abs().sum().item<double>(), 0.0);
  EXPECT_GT(critic.named_params().at("layers.0.attn.q.weight").grad().abs().sum().item<double>(), 0.0);
}

TEST(Transformer, Bf16CloseToFp32) {
  for (const ModelSpec& spec : {builtin_model("llama-tiny"), builtin_model("gpt2-tiny")}) {
    SCOPED_TRACE(spec.name);
    Transformer m32 = make_model(spec, HeadKind::kLanguageModel, 6);
    Transformer m16 = make_model(spec, HeadKind::kLanguageModel, 6, at::kBFloat16);
    EXPECT_EQ(m16.named_params().at("embed.weight").scalar_type(), at::kBFloat16);
    BuiltBatch b = pad_batch(random_sequences(spec.vocab, {8, 8}, 5));
    Targets t = next_token_targets(b.batch);
    at::Tensor a = m32.token_logprobs(m32.forward(b.batch), t.targets);
    at::Tensor c = m16.token_logprobs(m16.forward(b.batch), t.targets);
    EXPECT_EQ(c.scalar_type(), at::kFloat);
    EXPECT_EQ(compare(c, a, 0.15, 0.05), "");
  }
}

TEST(Transformer, RejectsBadStagesAndShards) {
  const ModelSpec spec = builtin_model("llama-tiny");
  EXPECT_THROW(Transformer(spec, HeadKind::kLanguageModel, ParallelContext{nullptr, 2, 2}, at::kFloat, at::kCPU),
               Error);
  EXPECT_THROW(Transformer(spec, HeadKind::kLanguageModel, ParallelContext{nullptr, 0, 3}, at::kFloat, at::kCPU),
               Error);
  Transformer m(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
  std::map<std::string, at::Tensor> bad = {{"embed.weight", at::zeros({3, 3})}};
  EXPECT_THROW(m.load_shards(bad, false), Error);
  EXPECT_THROW(m.load_shards({}, true), Error);
}

TEST(TokenBatch, PackingPlacesSequencesFirstFit) {
  BuiltBatch b = pack_batch({{1, 2, 3}, {4, 5}, {6, 7, 8, 9}, {10}}, 5);
  ASSERT_EQ(b.placements.size(), 4u);
  EXPECT_EQ(b.placements[1].row, 0);
  EXPECT_EQ(b.placements[1].offset, 3);
  EXPECT_EQ(b.placements[2].row, 1);
  EXPECT_EQ(b.placements[3].row, 1);
  EXPECT_TRUE(at::equal(b.batch.segments[0], at::tensor({1, 1, 1, 2, 2}, at::kInt)));
  EXPECT_TRUE(at::equal(b.batch.positions[1], at::tensor({0, 1, 2, 3, 0}, at::kLong)));
  EXPECT_THROW(pack_batch({{1, 2, 3, 4, 5, 6}}, 5), Error);
  Targets t = next_token_targets(b.batch);
  EXPECT_TRUE(at::equal(t.targets[0], at::tensor({2, 3, 0, 5, 0}, at::kLong)));
  EXPECT_TRUE(at::equal(t.mask[0], at::tensor({1.f, 1.f, 0.f, 1.f, 0.f})));
}

}  // namespace
}  // namespace realign::model
