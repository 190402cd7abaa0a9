#include "core/rng.h"

#include <gtest/gtest.h>

#include "core/hash.h"

namespace realign {
namespace {

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, UniformIntCoversRangeEvenly) {
  Rng r(1);
  int counts[5] = {0};
  for (int i = 0; i < 50000; ++i) counts[r.uniform_int(5)]++;
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
}

TEST(Hash, KnownFnv1aVector) {
  // FNV-1a 64 of "a" is af63dc4c8601ec8c (published test vector).
  EXPECT_EQ(to_hex64(fnv1a64("a", 1)), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace realign
