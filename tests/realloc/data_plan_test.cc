// The pure data redistribution plan: every consumer rank gets exactly its dp group's samples, each once.
#include "realloc/data_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "realloc/plan_test_util.h"

namespace realign {
namespace {

TEST(DataPlan, RandomPairsDeliverEverySampleOncePerConsumer) {
  Rng rng(3);
  for (int k = 0; k < 400; ++k) {
    const int world = k % 2 ? 8 : 12;
    const Layout producer = testing::random_layout(rng, world, {1, 2, 3, 4}, 3);
    const Layout consumer = testing::random_layout(rng, world, {1, 2, 3, 4}, 3);
    const int64_t n = rng.uniform_int(40);
    const std::string what = std::to_string(n) + " samples " + to_string(producer) + " -> " + to_string(consumer);
    const DataPlan plan = plan_data_redistribution(n, producer, consumer);
    std::map<int, std::vector<int>> got;
    int64_t minimum = 0;
    for (int d = consumer.first_device; d < consumer.first_device + consumer.size(); ++d) {
      got[d].assign(size_t(n), 0);
      const Range need = samples_of(n, consumer, d), have = samples_of(n, producer, d);
      minimum += need.size() - std::max<int64_t>(0, std::min(need.end, have.end) - std::max(need.begin, have.begin));
    }
    int64_t moved = 0;
    for (const auto& t : plan.local_copies) {
      ASSERT_EQ(t.src, t.dst) << what;
      const Range have = samples_of(n, producer, t.src);
      ASSERT_TRUE(t.samples.begin >= have.begin && t.samples.end <= have.end) << what;
      for (int64_t i = t.samples.begin; i < t.samples.end; ++i) ++got.at(t.dst)[size_t(i)];
    }
    for (const auto& t : plan.transfers) {
      ASSERT_NE(t.src, t.dst) << what;
      const Range have = samples_of(n, producer, t.src);
      ASSERT_TRUE(t.samples.size() > 0 && t.samples.begin >= have.begin && t.samples.end <= have.end) << what;
      for (int64_t i = t.samples.begin; i < t.samples.end; ++i) ++got.at(t.dst)[size_t(i)];
      moved += t.samples.size();
    }
    for (const auto& [d, counts] : got) {
      const Range need = samples_of(n, consumer, d);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(counts[size_t(i)], i >= need.begin && i < need.end ? 1 : 0) << what << " rank " << d << " sample " << i;
    }
    EXPECT_EQ(moved, plan.samples_moved) << what;
    EXPECT_EQ(moved, minimum) << what;
    EXPECT_EQ(plan.samples_minimum, minimum) << what;
  }
}

TEST(DataPlan, SendersAreSpreadOverTheCopies) {
  // d1t4p1 produced 64 samples on all 4 ranks; d4t1p1@4 needs 16 each: each producer rank sends 16.
  const DataPlan plan = plan_data_redistribution(64, parse_layout("d1t4p1"), parse_layout("d4t1p1@4"));
  std::map<int, int64_t> out;
  for (const auto& t : plan.transfers) out[t.src] += t.samples.size();
  ASSERT_EQ(out.size(), 4u);
  for (const auto& [src, n] : out) EXPECT_EQ(n, 16) << "rank " << src;
}

TEST(DataPlan, SameLayoutIsAllLocal) {
  const Layout l = parse_layout("d2t2p1");
  const DataPlan plan = plan_data_redistribution(10, l, l);
  EXPECT_TRUE(plan.transfers.empty());
  EXPECT_EQ(plan.local_copies.size(), 4u);
}

}  // namespace
}  // namespace realign
