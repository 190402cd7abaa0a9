// The model function calls on a tiny LLaMA: generation, inference and the training calls.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "model/init.h"
#include "train/generate_call.h"
#include "train/inference_calls.h"
#include "train/train_calls.h"

namespace realign::train {
namespace {

std::unique_ptr<model::Transformer> tiny(HeadKind head, uint64_t seed) {
  ModelSpec spec = builtin_model("llama-tiny");
  auto m = std::make_unique<model::Transformer>(
      spec, head, model::ParallelContext{comm::single_rank_group(), 0, 1}, at::kFloat, at::Device(at::kCPU));
  m->load_shards(model::init_full_params(spec, head, seed), true);
  return m;
}

runtime::TokenIds ids(const std::string& s) { return runtime::TokenIds(s.begin(), s.end()); }

TEST(GenerateCall, SeededSamplingRepeatsAndGreedyMatchesArgmaxOfFullForward) {
  auto m = tiny(HeadKind::kLanguageModel, 3);
  runtime::CallContext ctx = runtime::single_rank_context("actor_gen");
  std::vector<runtime::TokenIds> prompts = {ids("7+8="), ids("12+30="), ids("1+1=")};
  SamplingOptions o;
  o.max_new_tokens = 5;
  o.seed = 42;
  auto a = generate_call(ctx, *m, prompts, o);
  auto b = generate_call(ctx, *m, prompts, o);
  EXPECT_EQ(a, b);
  o.seed = 43;
  auto c = generate_call(ctx, *m, prompts, o);
  EXPECT_NE(a, c);
  // Greedy with a KV cache and left padding equals argmax over the uncached forward, token by token.
  o.greedy = true;
  auto g = generate_call(ctx, *m, prompts, o);
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_EQ(g[i].size(), 5u);
    runtime::TokenIds seq = prompts[i];
    for (int64_t k = 0; k < 5; ++k) {
      runtime::SequenceBatch sb = runtime::make_sequence_batch({seq}, {runtime::TokenIds{}});
      at::Tensor logits = m->logits(m->forward(sb.batch));
      int64_t next = logits[0][int64_t(seq.size()) - 1].argmax().item<int64_t>();
      ASSERT_EQ(next, g[i][size_t(k)]) << "row " << i << " token " << k;
      seq.push_back(next);
    }
  }
  // A stop token ends a row (and is kept).
  o.stop_tokens = {g[0][1]};
  auto s = generate_call(ctx, *m, prompts, o);
  EXPECT_EQ(s[0].size(), 2u);
}

// At pp = 1 the plan's micro-batches generate one after another (one wave's KV cache at a time): with a seed
// per row they sample what the whole batch samples, log-probs included.
TEST(GenerateCall, WavesAtOneStageSampleWhatTheWholeBatchSamples) {
  auto m = tiny(HeadKind::kLanguageModel, 4);
  std::vector<runtime::TokenIds> prompts = {ids("7+8="), ids("12+30="), ids("1+1="), ids("40+2="),
                                            ids("5+0=")};
  SamplingOptions o;
  o.greedy = false;
  o.max_new_tokens = 6;
  for (uint64_t i = 0; i < prompts.size(); ++i) o.row_seeds.push_back(100 + i);
  runtime::CallContext whole = runtime::single_rank_context("actor_gen");
  at::Tensor whole_lp, waves_lp;
  const auto expected = generate_call(whole, *m, prompts, o, &whole_lp);
  runtime::CallContext waves = whole;
  waves.micro_batches = 3;  // 2, 2 and 1 prompts
  const auto got = generate_call(waves, *m, prompts, o, &waves_lp);
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(at::allclose(waves_lp, whole_lp, 1e-5, 1e-5));
}

TEST(InferenceCalls, LogprobsMatchLogSoftmaxAndMicroBatchesAgree) {
  auto m = tiny(HeadKind::kLanguageModel, 5);
  runtime::SequenceBatch b = runtime::make_sequence_batch({ids("3+4="), ids("5+5="), ids("9+9=")},
                                                          {ids("7\n"), ids("10\n"), ids("18")});
  runtime::CallContext ctx = runtime::single_rank_context("ref_inf");
  at::Tensor lp = logprobs_call(ctx, *m, b);
  at::Tensor ref =
      m->logits(m->forward(b.batch)).log_softmax(-1).gather(2, b.targets.unsqueeze(2)).squeeze(2);
  EXPECT_TRUE(at::allclose(lp * b.response_mask, ref * b.response_mask, 1e-5, 1e-5));
  ctx.micro_batches = 3;  // a row each
  EXPECT_TRUE(at::allclose(logprobs_call(ctx, *m, b), lp, 1e-6, 1e-6));
  runtime::CallContext pp = runtime::single_rank_context("critic_inf");
  // A pp group that does not match the model's stages is refused by name, not mis-run.
  struct TwoRanks : comm::Group {
    int rank() const override { return 0; }
    int size() const override { return 2; }
    void all_reduce_sum(at::Tensor&) override {}
    at::Tensor all_gather_cat(const at::Tensor& t, int64_t) override { return t; }
    void broadcast(at::Tensor&, int) override {}
    void send(const at::Tensor&, int) override {}
    void recv(at::Tensor&, int) override {}
    void barrier() override {}
  };
  pp.pp = std::make_shared<TwoRanks>();
  EXPECT_THROW(logprobs_call(pp, *m, b), Error);
}

// The learning asserted here is gradient descent on two fixed rows (no sampling, no held-out statistic): 30
// steps memorise them, which no CPU's rounding reverses, so the margins (half the loss, every pair ranked,
// the sign of a log-prob change) are far from what rounding can move.
TEST(TrainCalls, SftLowersTheLossAndRewardModelLearnsAPreference) {
  runtime::CallContext ctx = runtime::single_rank_context("actor_sft");
  runtime::OptimConfig c;
  c.lr = 3e-3;
  c.schedule = "constant";
  runtime::TrainedModel actor = runtime::make_trained_model(tiny(HeadKind::kLanguageModel, 1), c, 30);
  runtime::SequenceBatch b =
      runtime::make_sequence_batch({ids("2+2="), ids("3+5=")}, {ids("4\n"), ids("8\n")});
  double first = sft_train_call(ctx, actor, b).loss, last = first;
  for (int i = 0; i < 30; ++i) last = sft_train_call(ctx, actor, b).loss;
  EXPECT_LT(last, first * 0.5) << first << " -> " << last;

  runtime::TrainedModel rm = runtime::make_trained_model(tiny(HeadKind::kValue, 2), c, 30);
  runtime::SequenceBatch chosen =
      runtime::make_sequence_batch({ids("2+2="), ids("3+5=")}, {ids("4\n"), ids("8\n")});
  runtime::SequenceBatch rejected =
      runtime::make_sequence_batch({ids("2+2="), ids("3+5=")}, {ids("5\n"), ids("9\n")});
  PairStats s;
  for (int i = 0; i < 30; ++i) s = reward_model_train_call(ctx, rm, chosen, rejected);
  EXPECT_EQ(s.accuracy, 1.0);
  EXPECT_LT(s.loss, 0.3);
}

TEST(TrainCalls, PpoActorStepRaisesTheLogprobOfAPositiveAdvantageResponse) {
  runtime::CallContext ctx = runtime::single_rank_context("actor_train");
  runtime::OptimConfig c;
  c.lr = 1e-3;
  c.schedule = "constant";
  runtime::TrainedModel actor = runtime::make_trained_model(tiny(HeadKind::kLanguageModel, 4), c, 10);
  PpoBatch batch;
  batch.seqs = runtime::make_sequence_batch({ids("4+4="), ids("4+4=")}, {ids("8\n"), ids("9\n")});
  batch.old_logprobs = logprobs_call(ctx, *actor.model, batch.seqs);
  batch.ref_logprobs = batch.old_logprobs.clone();
  at::Tensor adv = at::tensor({1.0f, -1.0f}).view({2, 1}) * batch.seqs.response_mask;
  batch.advantages = adv;
  ActorOptions o;
  o.epochs = 2;
  o.mini_batches = 2;
  ActorStats st = actor_train_call(ctx, actor, batch, o);
  EXPECT_EQ(st.updates, 4);
  at::Tensor after = logprobs_call(ctx, *actor.model, batch.seqs);
  at::Tensor delta = ((after - batch.old_logprobs) * batch.seqs.response_mask).sum(1);
  EXPECT_GT(delta[0].item<float>(), 0.f);
  EXPECT_LT(delta[1].item<float>(), 0.f);
}

// Gradient accumulation: a step over micro-batches of one row each (rows of different lengths, hence
// different token counts) updates the model as the whole batch in one pass does, for a token loss (PPO) and
// a pair loss (DPO), within fp32 round-off.
TEST(TrainCalls, MicroBatchesAccumulateTheWholeBatchGradient) {
  runtime::OptimConfig c;
  c.lr = 1e-2;
  c.schedule = "constant";
  const runtime::SequenceBatch seqs = runtime::make_sequence_batch({ids("4+4="), ids("12+3="), ids("1+1=")},
                                                                   {ids("8\n"), ids("15\n"), ids("2")});
  std::vector<runtime::TrainedModel> actors;
  std::vector<ActorStats> stats;
  for (int64_t micro_batches : {0, 3}) {
    runtime::CallContext ctx = runtime::single_rank_context("actor_train");
    ctx.micro_batches = micro_batches;
    actors.push_back(runtime::make_trained_model(tiny(HeadKind::kLanguageModel, 4), c, 10));
    PpoBatch batch;
    batch.seqs = seqs;
    batch.old_logprobs = logprobs_call(ctx, *actors.back().model, seqs) - 0.05;
    batch.ref_logprobs = batch.old_logprobs;
    batch.advantages = at::tensor({1.0f, -0.5f, 2.0f}).view({3, 1}) * seqs.response_mask;
    ActorOptions o;
    o.entropy_coef = 0.01;
    stats.push_back(actor_train_call(ctx, actors.back(), batch, o));
  }
  EXPECT_NEAR(stats[0].policy_loss, stats[1].policy_loss, 1e-6);
  EXPECT_NEAR(stats[0].entropy, stats[1].entropy, 1e-5);
  EXPECT_NEAR(stats[0].grad_norm, stats[1].grad_norm, 1e-5 * stats[0].grad_norm);
  const runtime::CallContext ctx = runtime::single_rank_context("actor_inf");
  EXPECT_TRUE(at::allclose(logprobs_call(ctx, *actors[0].model, seqs),
                           logprobs_call(ctx, *actors[1].model, seqs), 1e-5, 1e-5));

  const runtime::SequenceBatch chosen =
      runtime::make_sequence_batch({ids("2+2="), ids("13+5=")}, {ids("4\n"), ids("18\n")});
  const runtime::SequenceBatch rejected =
      runtime::make_sequence_batch({ids("2+2="), ids("13+5=")}, {ids("5\n"), ids("1\n")});
  std::vector<PairStats> pairs;
  for (int64_t micro_batches : {0, 2}) {
    runtime::CallContext ctx = runtime::single_rank_context("actor_train");
    ctx.micro_batches = micro_batches;
    runtime::TrainedModel policy = runtime::make_trained_model(tiny(HeadKind::kLanguageModel, 5), c, 10);
    const at::Tensor ref_c =
        runtime::sum_over_response(logprobs_call(ctx, *policy.model, chosen), chosen) - 0.1;
    const at::Tensor ref_r =
        runtime::sum_over_response(logprobs_call(ctx, *policy.model, rejected), rejected);
    pairs.push_back(dpo_train_call(ctx, policy, chosen, rejected, ref_c, ref_r, 0.1, 0.0));
  }
  EXPECT_NEAR(pairs[0].loss, pairs[1].loss, 1e-6);
  EXPECT_NEAR(pairs[0].margin, pairs[1].margin, 1e-6);
  EXPECT_NEAR(pairs[0].grad_norm, pairs[1].grad_norm, 1e-5 * pairs[0].grad_norm);
}

}  // namespace
}  // namespace realign::train
