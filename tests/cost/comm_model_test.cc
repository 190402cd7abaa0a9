#include "cost/comm_model.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(CommModel, AllReduceAlphaBeta) {
  const Link link{10e-6, 100e9};
  EXPECT_EQ(ring_allreduce_s(1e9, 1, link), 0);
  // Two ranks: each sends and receives half the buffer twice (reduce-scatter, all-gather): bytes / bandwidth.
  EXPECT_DOUBLE_EQ(ring_allreduce_s(1e9, 2, link), 10e-6 + 1e9 / 100e9);
  // Eight ranks: 2 * 7/8 of the bytes cross each link, 3 latencies.
  EXPECT_DOUBLE_EQ(ring_allreduce_s(1e9, 8, link), 3 * 10e-6 + 1.75 * 1e9 / 100e9);
  // Small messages are latency-bound, large ones bandwidth-bound.
  EXPECT_NEAR(ring_allreduce_s(8, 8, link), 30e-6, 1e-9);
  EXPECT_LT(ring_allreduce_s(1e9, 8, link), 2 * 1e9 / 100e9);
  EXPECT_EQ(p2p_s(0, link), 0);
  EXPECT_DOUBLE_EQ(p2p_s(1e6, link), 10e-6 + 1e-5);
}

}  // namespace
}  // namespace realign
