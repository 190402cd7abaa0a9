#include "profile/link_profile.h"

#include <gtest/gtest.h>

namespace realign::profile {
namespace {

TEST(LinkProfile, FitRecoversAlphaBetaFromExactSamples) {
  const double alpha = 50e-6, beta = 2e9;
  std::vector<std::pair<double, double>> samples;
  for (double bytes : {4096.0, 65536.0, 1048576.0, 8388608.0}) samples.emplace_back(bytes, alpha + bytes / beta);
  const LinkFit fit = fit_alpha_beta(samples);
  EXPECT_NEAR(fit.latency_s, alpha, 1e-12);
  EXPECT_NEAR(fit.bandwidth, beta, beta * 1e-9);
}

TEST(LinkProfile, FitClampsANegativeInterceptToZeroLatency) {
  // Noise can tilt the line below the origin; a negative latency would make small messages free.
  const LinkFit fit = fit_alpha_beta({{1000.0, 0.5e-6}, {2000.0, 2.0e-6}});
  EXPECT_EQ(fit.latency_s, 0.0);
  EXPECT_GT(fit.bandwidth, 0.0);
}

}  // namespace
}  // namespace realign::profile
