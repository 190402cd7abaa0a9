// KV-cache generation against recomputing the whole sequence every step; sampling options; stop tokens.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/generate.h"
#include "test_util.h"

namespace realign::model {
namespace {

using testing::compare;
using testing::make_model;
using testing::random_sequences;

// Greedy decoding of one prompt by running the full forward over the whole sequence at every step.
void recompute_greedy(Transformer& m, std::vector<int64_t> seq, int64_t n, std::vector<int64_t>* tokens,
                      std::vector<double>* logprobs) {
  c10::NoGradGuard no_grad;
  for (int64_t i = 0; i < n; ++i) {
    BuiltBatch b = pad_batch({seq});
    at::Tensor logits = m.logits(m.forward(b.batch))[0][int64_t(seq.size()) - 1];
    at::Tensor logp = at::log_softmax(logits, -1);
    const int64_t t = logits.argmax().item<int64_t>();
    tokens->push_back(t);
    logprobs->push_back(logp[t].item<double>());
    seq.push_back(t);
  }
}

TEST(Generate, GreedyWithCacheEqualsRecomputingEachStep) {
  for (const ModelSpec& spec : {testing::llama_scaled_tiny(), builtin_model("gpt2-tiny"), testing::qwen2_tiny(),
                                testing::mistral_tiny()}) {
    SCOPED_TRACE(spec.name);
    Transformer m = make_model(spec, HeadKind::kLanguageModel, 31);
    auto prompts = random_sequences(spec.vocab, {3, 8, 1, 5}, 9);
    GenerateOptions o;
    o.max_new_tokens = 12;
    GenerateResult r = generate(m, prompts, o);
    ASSERT_EQ(r.tokens.sizes().vec(), (std::vector<int64_t>{4, 12}));
    EXPECT_TRUE(at::equal(r.lengths, at::full({4}, 12, at::kLong)));
    for (size_t b = 0; b < prompts.size(); ++b) {
      std::vector<int64_t> want_tokens;
      std::vector<double> want_logprobs;
      recompute_greedy(m, prompts[b], 12, &want_tokens, &want_logprobs);
      EXPECT_TRUE(at::equal(r.tokens[b], at::tensor(want_tokens, at::kLong)))
          << "row " << b << ": " << r.tokens[b] << " vs recomputed " << at::tensor(want_tokens, at::kLong);
      EXPECT_EQ(compare(r.logprobs[b], at::tensor(want_logprobs, at::kDouble), 1e-5, 1e-5), "") << "row " << b;
    }
  }
}

TEST(Generate, TopKOneAndTinyTopPEqualGreedy) {
  const ModelSpec spec = builtin_model("llama-tiny");
  Transformer m = make_model(spec, HeadKind::kLanguageModel, 32);
  auto prompts = random_sequences(spec.vocab, {4, 6}, 10);
  GenerateOptions greedy;
  greedy.max_new_tokens = 8;
  GenerateResult g = generate(m, prompts, greedy);
  GenerateOptions k1 = greedy;
  k1.greedy = false;
  k1.top_k = 1;
  k1.temperature = 0.7;
  EXPECT_TRUE(at::equal(generate(m, prompts, k1).tokens, g.tokens));
  GenerateOptions p0 = greedy;
  p0.greedy = false;
  p0.top_p = 1e-6;
  GenerateResult r = generate(m, prompts, p0);
  EXPECT_TRUE(at::equal(r.tokens, g.tokens));
  // temperature 1: log-probs are the model's own.
  EXPECT_EQ(compare(r.logprobs, g.logprobs, 1e-6, 1e-6), "");
}

TEST(Generate, SamplingIsSeededAndVaries) {
  const ModelSpec spec = builtin_model("gpt2-tiny");
  Transformer m = make_model(spec, HeadKind::kLanguageModel, 33);
  auto prompts = random_sequences(spec.vocab, {4, 6, 2}, 11);
  GenerateOptions o;
  o.greedy = false;
  o.max_new_tokens = 10;
  o.seed = 5;
  GenerateResult a = generate(m, prompts, o), b = generate(m, prompts, o);
  EXPECT_TRUE(at::equal(a.tokens, b.tokens));
  o.seed = 6;
  EXPECT_FALSE(at::equal(generate(m, prompts, o).tokens, a.tokens));
  EXPECT_TRUE((a.logprobs <= 0).all().item<bool>());
}

TEST(Generate, RowSeedsMakeARowIndependentOfItsBatch) {
  // A data-parallel split must sample what one process sampling the whole batch would.
  const ModelSpec spec = builtin_model("llama-tiny");
  Transformer m = make_model(spec, HeadKind::kLanguageModel, 35);
  auto prompts = random_sequences(spec.vocab, {4, 6, 3, 5}, 13);
  GenerateOptions o;
  o.greedy = false;
  o.max_new_tokens = 8;
  o.row_seeds = {11, 12, 13, 14};
  GenerateResult whole = generate(m, prompts, o);
  for (int64_t b = 0; b < 4; ++b) {
    GenerateOptions one = o;
    one.row_seeds = {o.row_seeds[size_t(b)]};
    GenerateResult alone = generate(m, {prompts[size_t(b)]}, one);
    const int64_t n = alone.lengths[0].item<int64_t>();
    EXPECT_EQ(whole.lengths[b].item<int64_t>(), n) << "row " << b;
    EXPECT_TRUE(at::equal(whole.tokens[b].narrow(0, 0, n), alone.tokens[0].narrow(0, 0, n))) << "row " << b;
  }
  o.row_seeds = {1, 2};
  EXPECT_THROW(generate(m, prompts, o), Error);
}

TEST(Generate, StopTokensEndRowsWithPerSampleLengths) {
  const ModelSpec spec = builtin_model("llama-tiny");
  Transformer m = make_model(spec, HeadKind::kLanguageModel, 34);
  auto prompts = random_sequences(spec.vocab, {5, 2, 7}, 12);
  GenerateOptions o;
  o.max_new_tokens = 10;
  o.pad_id = -1;
  GenerateResult full = generate(m, prompts, o);
  const int64_t stop = full.tokens[0][2].item<int64_t>();
  o.stop_tokens = {stop, 100000};
  GenerateResult r = generate(m, prompts, o);
  for (int64_t b = 0; b < 3; ++b) {
    int64_t want = 10;
    for (int64_t i = 0; i < 10; ++i)
      if (full.tokens[b][i].item<int64_t>() == stop) {
        want = i + 1;
        break;
      }
    EXPECT_EQ(r.lengths[b].item<int64_t>(), want) << "row " << b;
    EXPECT_TRUE(at::equal(r.tokens[b].narrow(0, 0, want), full.tokens[b].narrow(0, 0, want)));
    if (want < r.tokens.size(1)) {
      EXPECT_TRUE((r.tokens[b].narrow(0, want, r.tokens.size(1) - want) == -1).all().item<bool>());
      EXPECT_TRUE((r.logprobs[b].narrow(0, want, r.tokens.size(1) - want) == 0).all().item<bool>());
    }
  }
  EXPECT_LE(r.lengths[0].item<int64_t>(), 3);
}

TEST(Generate, ChooseNextFollowsTheFilteredDistribution) {
  at::Tensor logits = at::log(at::tensor({0.5f, 0.3f, 0.15f, 0.05f})).unsqueeze(0).expand({4000, 4}).contiguous();
  at::Generator gen = at::detail::createCPUGenerator(1);
  GenerateOptions o;
  o.greedy = false;
  auto freq = [&](const GenerateOptions& opt) {
    Choice c = choose_next(logits, opt, gen);
    return at::bincount(c.tokens, {}, 4).to(at::kDouble) / 4000.0;
  };
  EXPECT_EQ(compare(freq(o), at::tensor({0.5, 0.3, 0.15, 0.05}), 0.03, 0), "");
  GenerateOptions k2 = o;
  k2.top_k = 2;
  EXPECT_EQ(compare(freq(k2), at::tensor({0.625, 0.375, 0.0, 0.0}), 0.03, 0), "");
  GenerateOptions p = o;
  p.top_p = 0.75;  // 0.5 + 0.3 reaches 0.75: two tokens
  EXPECT_EQ(compare(freq(p), at::tensor({0.625, 0.375, 0.0, 0.0}), 0.03, 0), "");
  Choice c = choose_next(logits, o, gen);
  EXPECT_EQ(compare(c.logprobs, at::log(at::tensor({0.5, 0.3, 0.15, 0.05}, at::kDouble)).index_select(0, c.tokens),
                    1e-6, 1e-6),
            "");
}

TEST(Generate, RejectsBadInput) {
  const ModelSpec spec = builtin_model("gpt2-tiny");
  Transformer m = make_model(spec, HeadKind::kLanguageModel, 35);
  GenerateOptions o;
  EXPECT_THROW(generate(m, {{}}, o), Error);
  EXPECT_THROW(generate(m, {{1, 256}}, o), Error);
  o.max_new_tokens = 300;
  EXPECT_THROW(generate(m, {{1, 2}}, o), Error);
  o.max_new_tokens = 4;
  o.greedy = false;
  o.temperature = 0;
  EXPECT_THROW(generate(m, {{1, 2}}, o), Error);
}

}  // namespace
}  // namespace realign::model
