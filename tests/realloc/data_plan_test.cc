// The pure data redistribution plan: every consumer rank gets exactly its dp group's samples, each once.
#include "realloc/data_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "realloc/plan_test_util.h"

namespace realign {
namespace {

bool needs(const std::vector<Range>& shares, int64_t i) {
  return std::any_of(shares.begin(), shares.end(), [&](const Range& r) { return i >= r.begin && i < r.end; });
}

TEST(DataPlan, RandomPairsDeliverEverySampleOncePerConsumer) {
  Rng rng(3);
  for (int k = 0; k < 400; ++k) {
    const int world = k % 2 ? 8 : 12;
    const Layout producer = testing::random_layout(rng, world, {1, 2, 3, 4}, 3);
    const Layout consumer = testing::random_layout(rng, world, {1, 2, 3, 4}, 3);
    const int64_t n = rng.uniform_int(40);
    const int64_t segments = k % 3 ? 1 : 1 + rng.uniform_int(4);
    const std::string what = std::to_string(n) + " samples " + to_string(producer) + " -> " +
                             to_string(consumer) + " in " + std::to_string(segments) + " segments";
    const DataPlan plan = plan_data_redistribution(n, producer, consumer, segments);
    std::map<int, std::vector<int>> got;
    int64_t minimum = 0;
    for (int d = consumer.first_device; d < consumer.first_device + consumer.size(); ++d) {
      got[d].assign(size_t(n), 0);
      const Range have = samples_of(n, producer, d);
      for (const Range& need : segment_shares(n, consumer, d, segments))
        minimum += need.size() - intersect(need, have).size();
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
      const std::vector<Range> shares = segment_shares(n, consumer, d, segments);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(counts[size_t(i)], needs(shares, i) ? 1 : 0) << what << " rank " << d << " sample " << i;
    }
    EXPECT_EQ(moved, plan.samples_moved) << what;
    EXPECT_EQ(moved, minimum) << what;
    EXPECT_EQ(plan.samples_minimum, minimum) << what;
  }
}

TEST(DataPlan, SegmentSharesDoNotDependOnTheDpDegree) {
  // 10 samples in 3 segments [0,3) [3,6) [6,10): each dp rank takes its balanced share of every segment, so
  // segment j is the same set of samples for any dp.
  const Layout d2 = parse_layout("d2t1p1"), d4 = parse_layout("d4t2p1@2");
  EXPECT_EQ(segment_shares(10, d2, 0, 3), (std::vector<Range>{{0, 1}, {3, 4}, {6, 8}}));
  EXPECT_EQ(segment_shares(10, d2, 1, 3), (std::vector<Range>{{1, 3}, {4, 6}, {8, 10}}));
  EXPECT_EQ(segment_shares(10, d4, 2, 3), (std::vector<Range>{{0, 0}, {3, 3}, {6, 7}}));
  EXPECT_EQ(segment_shares(10, d4, 3, 3), segment_shares(10, d4, 2, 3));  // a tp pair shares its rows
  EXPECT_EQ(segment_shares(10, d4, 9, 3), (std::vector<Range>{{2, 3}, {5, 6}, {9, 10}}));
  EXPECT_TRUE(segment_shares(10, d4, 0, 3).empty());
  EXPECT_EQ(segment_shares(10, d2, 1, 1), (std::vector<Range>{samples_of(10, d2, 1)}));
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
