#include "runtime/detail/call_waves.h"

#include <gtest/gtest.h>

namespace realign::runtime {
namespace {

Layout at(int first, int dp, int tp = 1, int pp = 1) { return Layout{first, dp, tp, pp}; }

using Waves = std::vector<std::vector<size_t>>;

TEST(CallWaves, CallsOnDisjointDevicesShareOneWave) {
  // Interleaving after generation: the actor's and the critic's copies on devices 0-1 and 2, the reference
  // at home on 3.
  EXPECT_EQ(call_waves({{at(0, 1, 2), at(0, 2)}, {at(2, 2), at(2, 1)}, {at(3, 1), at(3, 1)}}),
            (Waves{{0, 1, 2}}));
}

TEST(CallWaves, ASecondCopyOnTheSameDevicesStartsANewWave) {
  // Reference at home on all devices, then the actor's and the critic's copies on all devices: one copy at a
  // time.
  EXPECT_EQ(
      call_waves({{at(0, 2, 1, 2), at(0, 2, 1, 2)}, {at(0, 2, 2), at(0, 4)}, {at(3, 1), at(0, 1, 2, 2)}}),
      (Waves{{0, 1}, {2}}));
}

TEST(CallWaves, CallsAtHomeNeverSplitAWave) {
  // Both updates train in place, even on the same devices: nothing is copied.
  EXPECT_EQ(call_waves({{at(0, 4), at(0, 4)}, {at(0, 2, 2), at(0, 2, 2)}}), (Waves{{0, 1}}));
  // A copy after a call at home on overlapping devices stays in the wave; a partial overlap of two copies
  // does not.
  EXPECT_EQ(call_waves({{at(0, 4), at(0, 4)}, {at(0, 1), at(0, 2)}, {at(2, 1), at(1, 2)}}),
            (Waves{{0, 1}, {2}}));
}

TEST(CallWaves, NoCallsNoWaves) { EXPECT_TRUE(call_waves({}).empty()); }

}  // namespace
}  // namespace realign::runtime
