// In-process checks: the one-rank group, axis rank lists of layouts, exit descriptions.
#include "comm/group.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "comm/launcher.h"
#include "comm/world.h"

namespace realign::comm {
namespace {

TEST(SingleRankGroup, CollectivesAreIdentities) {
  auto g = single_rank_group();
  EXPECT_EQ(g->rank(), 0);
  EXPECT_EQ(g->size(), 1);
  at::Tensor t = at::arange(4, at::kFloat);
  g->all_reduce_sum(t);
  EXPECT_TRUE(at::equal(t, at::arange(4, at::kFloat)));
  g->all_reduce(t, ReduceOp::kMax);
  EXPECT_TRUE(at::equal(t, at::arange(4, at::kFloat)));
  EXPECT_TRUE(at::equal(g->all_gather_cat(t, 0), t));
  EXPECT_TRUE(at::equal(g->reduce_scatter_sum(t, 0), t));
  g->broadcast(t, 0);
  g->barrier();
}

TEST(SingleRankGroup, BadArgumentsAbortWithTheirName) {
  auto g = single_rank_group();
  at::Tensor undefined;
  EXPECT_DEATH(g->all_reduce_sum(undefined), "all_reduce_sum: undefined tensor");
  at::Tensor t = at::zeros({2});
  EXPECT_DEATH(g->broadcast(t, 1), "broadcast: rank 1 outside a group of 1");
}

TEST(AxisRanks, D2T2P1) {
  const Layout l = parse_layout("d2t2p1");
  // tp fastest: rank = dp*2 + tp.
  EXPECT_EQ(axis_ranks(l, 0, 't'), (std::vector<int>{0, 1}));
  EXPECT_EQ(axis_ranks(l, 3, 't'), (std::vector<int>{2, 3}));
  EXPECT_EQ(axis_ranks(l, 1, 'd'), (std::vector<int>{1, 3}));
  EXPECT_EQ(axis_ranks(l, 2, 'p'), (std::vector<int>{2}));
}

TEST(AxisRanks, PipelineMajorWithOffset) {
  const Layout l = parse_layout("d1t2p2@2");  // devices 2..5: stage 0 = {2,3}, stage 1 = {4,5}
  EXPECT_EQ(axis_ranks(l, 5, 'p'), (std::vector<int>{3, 5}));
  EXPECT_EQ(axis_ranks(l, 4, 't'), (std::vector<int>{4, 5}));
  EXPECT_EQ(axis_ranks(l, 4, 'd'), (std::vector<int>{4}));
}

TEST(DescribeExit, SignalAndCode) {
  RankExit e;
  e.rank = 1;
  e.signal = SIGKILL;
  EXPECT_EQ(describe_exit(e), "rank 1 died: signal 9 (SIGKILL)");
  e.rank = 2;
  e.signal = 0;
  e.exit_code = 3;
  EXPECT_EQ(describe_exit(e), "rank 2 exited with code 3");
}

}  // namespace
}  // namespace realign::comm
