#include "train/device_idle.h"

#include <gtest/gtest.h>

namespace realign::train {
namespace {

TEST(DeviceIdle, OverlappingEventsCountOnceAndOtherDevicesNotAtAll) {
  Timeline t;
  t.n_devices = 4;
  // Devices 0-1: a call over [0, 4) and a move over [3, 5) overlapping it: busy 5 of 10 s each.
  t.events.push_back({"actor_gen", "call", 0, 2, 0, 4, 0});
  t.events.push_back({"actor_gen", "realloc", 0, 2, 3, 5, 0});
  // Devices 2-3: busy [0, 10), and an event past the span is cut at it.
  t.events.push_back({"actor_train", "call", 2, 2, 0, 12, 0});
  EXPECT_NEAR(idle_share(t, Layout{0, 2, 1, 1}, 10), 0.5, 1e-12);
  EXPECT_NEAR(idle_share(t, Layout{2, 2, 1, 1}, 10), 0.0, 1e-12);
  // All four: 10 + 20 busy of 40.
  EXPECT_NEAR(idle_share(t, Layout{0, 4, 1, 1}, 10), 0.25, 1e-12);
  EXPECT_EQ(idle_share(t, Layout{0, 4, 1, 1}, 0), 0.0);
}

}  // namespace
}  // namespace realign::train
