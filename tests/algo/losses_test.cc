// Every loss against a small case computed by hand (the arithmetic is written out beside each expectation).
#include <gtest/gtest.h>

#include <cmath>

#include "algo/advantages.h"
#include "algo/gae.h"
#include "algo/kl.h"
#include "algo/masked.h"
#include "algo/ppo_loss.h"
#include "algo/preference_loss.h"
#include "core/error.h"

namespace realign::algo {
namespace {

at::Tensor t(std::vector<float> v) { return at::tensor(v, at::kFloat); }
at::Tensor t2(std::vector<float> v, int64_t rows) { return t(v).view({rows, -1}); }

void expect_near(const at::Tensor& got, std::vector<float> want, double tol = 1e-5) {
  auto flat = got.reshape({-1});
  ASSERT_EQ(flat.numel(), int64_t(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(flat[int64_t(i)].item<double>(), want[i], tol) << "at " << i;
}

TEST(Gae, HandComputedGammaOneLambda095) {
  // delta2 = 1 - .3 = .7; a2 = .7; delta1 = .3 - .4 = -.1; a1 = -.1 + .95*.7 = .565;
  // delta0 = .4 - .5 = -.1; a0 = -.1 + .95*.565 = .43675. Returns = a + v.
  auto r = gae(t2({0, 0, 1}, 1), t2({.5f, .4f, .3f}, 1), t2({1, 1, 1}, 1), 1.0, 0.95);
  expect_near(r.advantages, {.43675f, .565f, .7f});
  expect_near(r.returns, {.93675f, .965f, 1.0f});
}

TEST(Gae, HandComputedDiscountedWithPromptAndPadding) {
  // Row 0: prompt token, then the 3-token case with gamma .9, lambda .8:
  // a2 = .5 - .3 = .2; a1 = -.1 + .9*.3 - .2 + .72*.2 = .114; a0 = .2 + .9*.2 - .1 + .72*.114 = .36208.
  // Row 1: two response tokens then padding: a1 = 1 - .5 = .5; a0 = 0 + .9*.5 - .25 + .72*.5 = .56.
  auto rewards = t2({9, .2f, -.1f, .5f, 0, 1, 7, 7}, 2);
  auto values = t2({9, .1f, .2f, .3f, .25f, .5f, 7, 7}, 2);
  auto mask = t2({0, 1, 1, 1, 1, 1, 0, 0}, 2);
  auto r = gae(rewards, values, mask, 0.9, 0.8);
  expect_near(r.advantages, {0, .36208f, .114f, .2f, .56f, .5f, 0, 0});
}

TEST(TokenRewards, KlPenaltyOnEveryTokenScoreOnTheLast) {
  // -0.5 * kl on response tokens; the score 1.0 lands on the last one: [0, -.1, -.15 + 1].
  expect_near(token_rewards(t({1.0f}), t2({.1f, .2f, .3f}, 1), t2({0, 1, 1}, 1), 0.5), {0, -.1f, .85f});
  // Clipped to [-0.5, 0.5] first.
  expect_near(token_rewards(t({3.0f}), t2({0, 0, 0}, 1), t2({1, 1, 0}, 1), 0.5, 0.5), {0, .5f, 0});
}

TEST(PolicyLoss, ClippedSurrogateByHand) {
  // ratios 1.5, 0.5, 1.1; advantages 1, -1, 2; eps .2:
  // max(-1.5, -1.2) = -1.2; max(.5, .8) = .8; max(-2.2, -2.2) = -2.2 -> mean -0.8667; clipped on 2 of 3.
  auto logp = t2({std::log(1.5f), std::log(0.5f), std::log(1.1f)}, 1).set_requires_grad(true);
  auto out = ppo_policy_loss(logp, at::zeros({1, 3}), t2({1, -1, 2}, 1), at::ones({1, 3}), 0.2, 0.2);
  EXPECT_NEAR(out.loss.item<double>(), -0.866667, 1e-5);
  EXPECT_NEAR(out.clip_fraction, 2.0 / 3.0, 1e-6);
  out.loss.backward();
  // Only the unclipped token has a gradient: d(-A * ratio)/dlogp / 3 = -2 * 1.1 / 3.
  expect_near(logp.grad(), {0, 0, -2.2f / 3});
}

TEST(PolicyLoss, DualClipBoundsNegativeAdvantages) {
  // ratio 5, A = -1: max(5, 0.8) = 5, bounded by the dual clip at 3 * 1 = 3.
  auto out = ppo_policy_loss(t2({std::log(5.0f)}, 1), at::zeros({1, 1}), t2({-1}, 1), at::ones({1, 1}), 0.2,
                             0.2, 3.0);
  EXPECT_NEAR(out.loss.item<double>(), 3.0, 1e-5);
}

TEST(PolicyLoss, BehaviourWeightsDropTokensAboveTheCap) {
  // log(prox) - log(behav) = log 2, log 0.5, log 8, and a token outside the mask: w = 2, 0.5, 8 (dropped at
  // cap 5), 0. Mean before the cap (2 + 0.5 + 8) / 3 = 3.5; one of three masked tokens dropped.
  const at::Tensor prox = t2({std::log(2.0f), std::log(0.5f), std::log(8.0f), 1.0f}, 1);
  const at::Tensor mask = t2({1, 1, 1, 0}, 1);
  const BehaviourWeights w = behaviour_weights(prox, at::zeros({1, 4}), mask, 5.0);
  expect_near(w.weights, {2, 0.5f, 0, 0});
  EXPECT_NEAR(w.mean, 3.5, 1e-5);
  EXPECT_NEAR(w.dropped, 1.0 / 3.0, 1e-6);
  expect_near(behaviour_weights(prox, at::zeros({1, 4}), mask, 0).weights, {2, 0.5f, 8, 0});
}

TEST(PolicyLoss, DecoupledLossIsTheWeightedSurrogateAgainstTheProximalPolicy) {
  // The per-token loss w * max(-A r, -A clip(r)) equals ppo_policy_loss with advantages A * w (w >= 0):
  // ratios to the proximal policy 1.5 and 0.5, A = 1 and -1, w = 2 and 0.5:
  // 2 * max(-1.5, -1.2) = -2.4; 0.5 * max(0.5, 0.8) = 0.4; mean -1.0.
  const at::Tensor logp = t2({std::log(1.5f), std::log(0.5f)}, 1);
  const at::Tensor w = t2({2, 0.5f}, 1);
  auto out = ppo_policy_loss(logp, at::zeros({1, 2}), t2({1, -1}, 1) * w, at::ones({1, 2}), 0.2, 0.2);
  EXPECT_NEAR(out.loss.item<double>(), -1.0, 1e-5);
}

TEST(ValueLoss, ClippedByHand) {
  // v 1.0, old .5, R 2, eps .2: unclipped (1-2)^2 = 1; clipped v .7: (.7-2)^2 = 1.69; .5 * max = .845.
  auto out = ppo_value_loss(t2({1.0f}, 1), t2({.5f}, 1), t2({2.0f}, 1), at::ones({1, 1}), 0.2);
  EXPECT_NEAR(out.loss.item<double>(), 0.845, 1e-5);
  EXPECT_NEAR(out.clip_fraction, 1.0, 1e-6);
  EXPECT_NEAR(
      ppo_value_loss(t2({1.0f}, 1), t2({.5f}, 1), t2({2.0f}, 1), at::ones({1, 1}), 0).loss.item<double>(),
      0.5, 1e-6);
}

TEST(Kl, EstimatorsByHand) {
  // log p - log q = -1 - (-1.5) = .5: k1 = .5, k2 = .125, k3 = e^-.5 + .5 - 1 = .1065307.
  auto p = t({-1.0f}), q = t({-1.5f});
  expect_near(kl_per_token(p, q, KlEstimator::kK1), {.5f});
  expect_near(kl_per_token(p, q, KlEstimator::kK2), {.125f});
  expect_near(kl_per_token(p, q, KlEstimator::kK3), {.1065307f});
  EXPECT_THROW(kl_estimator_from_string("k4", "ppo.kl_estimator"), Error);
}

TEST(Kl, AdaptiveControllerByHand) {
  AdaptiveKlController c(0.1, 6.0, 10000);
  c.update(12.0, 256);  // error clipped to .2: .1 * (1 + .2 * 256 / 10000)
  EXPECT_NEAR(c.coef(), 0.1 * 1.00512, 1e-12);
  c.update(3.0, 256);  // error -.5 clipped to -.2
  EXPECT_NEAR(c.coef(), 0.1 * 1.00512 * (1 - 0.00512), 1e-12);
}

TEST(Advantages, GroupNormalisedByHand) {
  // Group [1,0,0,1]: mean .5, unbiased std sqrt(1/3) = .57735 -> +-.866025; group [2,2,2,2]: all 0.
  expect_near(group_advantages(t({1, 0, 0, 1, 2, 2, 2, 2}), 4),
              {.866025f, -.866025f, -.866025f, .866025f, 0, 0, 0, 0}, 1e-4);
  expect_near(group_advantages(t({1, 0, 0, 1}), 2, false), {.5f, -.5f, -.5f, .5f});
  expect_near(remax_advantages(t({1, .5f}), t({.25f, 1})), {.75f, -.5f});
  expect_near(broadcast_to_tokens(t({2, 3}), t2({0, 1, 1, 1, 0, 0}, 2)), {0, 2, 2, 3, 0, 0});
}

TEST(Masked, WhitenByHand) {
  // Masked values 1, 2, 3: mean 2, unbiased var 1 -> -1, 0, 1; the masked-out entry becomes 0.
  expect_near(masked_whiten(t2({1, 2, 3, 100}, 1), t2({1, 1, 1, 0}, 1)), {-1, 0, 1, 0}, 1e-4);
  EXPECT_NEAR(masked_mean(t2({1, 2, 3, 100}, 1), t2({1, 1, 1, 0}, 1)).item<double>(), 2.0, 1e-6);
}

TEST(PreferenceLoss, DpoByHand) {
  // beta .1: chosen reward .1*(-10 - -11) = .1, rejected .1*(-12 - -11) = -.1, margin .2;
  // loss = log(1 + e^-.2) = .598139.
  auto out = dpo_loss(t({-10}), t({-12}), t({-11}), t({-11}), 0.1);
  EXPECT_NEAR(out.loss.item<double>(), 0.598139, 1e-5);
  EXPECT_EQ(out.accuracy, 1.0);
  EXPECT_NEAR(out.margin, 0.2, 1e-6);
}

TEST(PreferenceLoss, BradleyTerryByHand) {
  // Scores 1 vs 3: -log sigmoid(-2) = log(1 + e^2) = 2.126928; ranked wrongly.
  auto out = bradley_terry_loss(t({1}), t({3}));
  EXPECT_NEAR(out.loss.item<double>(), 2.126928, 1e-5);
  EXPECT_EQ(out.accuracy, 0.0);
}

}  // namespace
}  // namespace realign::algo
