// In-process checks: the one-rank group, axis rank lists of layouts, exit descriptions.
#include "comm/group.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <optional>

#include "comm/launcher.h"
#include "comm/world.h"
#include "core/error.h"

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
  // "threadsafe" re-executes the test binary instead of forking this (torch-using) process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto g = single_rank_group();
  at::Tensor undefined;
  EXPECT_DEATH(g->all_reduce_sum(undefined), "all_reduce_sum: undefined tensor");
  at::Tensor t = at::zeros({2});
  EXPECT_DEATH(g->broadcast(t, 1), "broadcast: rank 1 outside a group of 1");
}

TEST(AxisRanks, D2T2P1) {
  const Layout l = parse_layout("d2t2p1");
  // tp fastest: rank = dp*2 + tp.
  EXPECT_EQ(axis_ranks(l, 0, LayoutAxis::kTensor), (std::vector<int>{0, 1}));
  EXPECT_EQ(axis_ranks(l, 3, LayoutAxis::kTensor), (std::vector<int>{2, 3}));
  EXPECT_EQ(axis_ranks(l, 1, LayoutAxis::kData), (std::vector<int>{1, 3}));
  EXPECT_EQ(axis_ranks(l, 2, LayoutAxis::kPipeline), (std::vector<int>{2}));
}

TEST(AxisRanks, PipelineMajorWithOffset) {
  const Layout l = parse_layout("d1t2p2@2");  // devices 2..5: stage 0 = {2,3}, stage 1 = {4,5}
  EXPECT_EQ(axis_ranks(l, 5, LayoutAxis::kPipeline), (std::vector<int>{3, 5}));
  EXPECT_EQ(axis_ranks(l, 4, LayoutAxis::kTensor), (std::vector<int>{4, 5}));
  EXPECT_EQ(axis_ranks(l, 4, LayoutAxis::kData), (std::vector<int>{4}));
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::vector<std::pair<std::string, const char*>> vars) {
    for (auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
      if (v) {
        ::setenv(k.c_str(), v, 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
  }
  ~ScopedEnv() {
    for (auto& [k, v] : saved_) {
      if (v) {
        ::setenv(k.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(Rendezvous, ReadsTorchrunEnvironment) {
  ScopedEnv env({{"MASTER_ADDR", "10.0.0.1"},
                 {"MASTER_PORT", "29500"},
                 {"RANK", "3"},
                 {"WORLD_SIZE", "8"},
                 {"LOCAL_RANK", nullptr},
                 {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  const Rendezvous rv = rendezvous_from_env();
  EXPECT_EQ(rv.master_addr, "10.0.0.1");
  EXPECT_EQ(rv.master_port, 29500);
  EXPECT_EQ(rv.rank, 3);
  EXPECT_EQ(rv.world_size, 8);
  EXPECT_EQ(rv.local_rank, 3);  // defaults to RANK
  EXPECT_TRUE(rv.external_store);
}

TEST(Rendezvous, ErrorsNameTheVariable) {
  auto message = [] {
    try {
      rendezvous_from_env();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {
    ScopedEnv env(
        {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}, {"WORLD_SIZE", "2"}, {"RANK", "2"}});
    EXPECT_EQ(message().rfind("RANK: '2' is not an integer in [0, 1]", 0), 0u) << message();
  }
  {
    ScopedEnv env({{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", nullptr}});
    EXPECT_EQ(message().rfind("MASTER_PORT: environment variable is not set", 0), 0u) << message();
  }
}

TEST(WorldOptions, TimeoutsFromEnvironment) {
  ScopedEnv env({{"REALIGN_COMM_TIMEOUT_S", "2.5"}, {"REALIGN_HEARTBEAT_TIMEOUT_S", nullptr}});
  const WorldOptions o = world_options_from_env();
  EXPECT_EQ(o.timeout.count(), 2500);
  EXPECT_EQ(o.heartbeat_timeout.count(), 30'000);
  ScopedEnv bad({{"REALIGN_COMM_TIMEOUT_S", "soon"}, {"REALIGN_HEARTBEAT_TIMEOUT_S", nullptr}});
  EXPECT_THROW(world_options_from_env(), Error);
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
