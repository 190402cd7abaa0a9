#include "core/units.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(Units, FormatsBytesAndSeconds) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1.5 * kGiB), "1.5 GiB");
  EXPECT_EQ(format_seconds(0.25), "250 ms");
  EXPECT_EQ(format_seconds(3.414), "3.41 s");
  EXPECT_EQ(format_seconds(125), "2 min 05 s");
}

}  // namespace
}  // namespace realign
