// The engine's pieces under the calls: sequence batches (masks, stop penalties), AdamW with its schedule, and
// gradient clipping over shards.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "comm/group.h"
#include "runtime/adamw.h"
#include "runtime/grad_sync.h"
#include "runtime/sequence_batch.h"

namespace realign::runtime {
namespace {

TokenIds ids(const std::string& s) { return TokenIds(s.begin(), s.end()); }

TEST(SequenceBatch, ResponsesCutBeforeAStopTokenArePenalised) {
  const at::Tensor p =
      missing_stop_penalties({ids("12\n"), ids("123"), ids(""), ids("7\n")}, {int64_t('\n')}, 2.5);
  EXPECT_TRUE(at::equal(p, at::tensor({0.f, 2.5f, 2.5f, 0.f})));
}

TEST(SequenceBatch, MaskMarksPositionsThatPredictResponseTokens) {
  SequenceBatch b = make_sequence_batch({ids("1+2="), ids("10+20=")}, {ids("3\n"), ids("")});
  ASSERT_EQ(b.batch.tokens.size(1), 6);
  // Row 0: prompt 4 tokens, response 2: positions 3 and 4 predict '3' and '\n'.
  EXPECT_EQ(b.response_mask[0].sum().item<float>(), 2.f);
  EXPECT_EQ(b.response_mask[0][3].item<float>(), 1.f);
  EXPECT_EQ(b.targets[0][3].item<int64_t>(), int64_t('3'));
  EXPECT_EQ(b.targets[0][4].item<int64_t>(), int64_t('\n'));
  EXPECT_EQ(b.response_mask[1].sum().item<float>(), 0.f);
  at::Tensor per_token = at::arange(12, at::kFloat).view({2, 6});
  EXPECT_EQ(last_response_value(per_token, b)[0].item<float>(), 5.f);  // token index 5: the '\n'
  EXPECT_EQ(last_response_value(per_token, b)[1].item<float>(), 11.f);
}

TEST(AdamW, FirstStepMatchesHandComputedUpdateAndSchedule) {
  OptimConfig c;
  c.lr = 0.1;
  c.weight_decay = 0.5;
  c.beta1 = 0.9;
  c.beta2 = 0.99;
  c.eps = 0;
  c.schedule = "constant";
  at::Tensor w = at::tensor({1.0f, -2.0f}).view({1, 2}).requires_grad_(true);
  AdamW opt({{"w", w}}, c, 10);
  w.mutable_grad() = at::tensor({0.5f, -4.0f}).view({1, 2});
  opt.step();
  // First step: m_hat = g, v_hat = g^2, update = sign(g); decoupled decay w *= 1 - lr * wd.
  EXPECT_NEAR(w[0][0].item<float>(), 1.0 * 0.95 - 0.1, 1e-6);
  EXPECT_NEAR(w[0][1].item<float>(), -2.0 * 0.95 + 0.1, 1e-6);
  OptimConfig s;
  s.lr = 1.0;
  s.warmup_steps = 2;
  s.min_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(scheduled_lr(s, 0, 12), 0.5);
  EXPECT_DOUBLE_EQ(scheduled_lr(s, 1, 12), 1.0);
  EXPECT_NEAR(scheduled_lr(s, 2, 12), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(s, 7, 12), 0.55, 1e-12);  // half way down the cosine
  EXPECT_NEAR(scheduled_lr(s, 12, 12), 0.1, 1e-12);
}

TEST(GradSync, ClipScalesToTheGlobalNorm) {
  at::Tensor a = at::zeros({2}).requires_grad_(true), b = at::zeros({1}).requires_grad_(true);
  a.mutable_grad() = at::tensor({3.0f, 0.0f});
  b.mutable_grad() = at::tensor({4.0f});
  auto one = comm::single_rank_group();
  // b is "replicated and not counted here": the norm is 3, so nothing is clipped at max 4.
  EXPECT_NEAR(clip_grad_norm({a, b}, {true, false}, *one, *one, 4.0), 3.0, 1e-9);
  EXPECT_NEAR(clip_grad_norm({a, b}, {true, true}, *one, *one, 1.0), 5.0, 1e-9);
  EXPECT_NEAR(a.grad()[0].item<float>(), 0.6f, 1e-5);
  EXPECT_NEAR(b.grad()[0].item<float>(), 0.8f, 1e-5);
}

}  // namespace
}  // namespace realign::runtime
