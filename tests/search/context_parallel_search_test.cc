// Context parallelism and the search: realign's runtime refuses it, the candidate enumeration does not
// propose it (plans take it from engines' scripts and plan files), and the simulator prices a plan that has
// it.
#include <gtest/gtest.h>

#include "../plan/test_graphs.h"
#include "cost/simulator.h"
#include "search/candidates.h"

namespace realign {
namespace {

TEST(ContextParallelSearch, RealignsRuntimeRefusesItNamingTheCall) {
  const DataflowGraph g = testing::ppo_7b();
  Strategy s{2, 1, 1, 1};
  EXPECT_EQ(runtime_limit_problem(g, MfcAssignment{"actor_train", DeviceMesh{0, 2}, s}), "");
  s.dp = 1;
  s.cp = 2;
  const std::string why = runtime_limit_problem(g, MfcAssignment{"actor_train", DeviceMesh{0, 2}, s});
  EXPECT_EQ(why,
            "actor_train splits its sequences over 2 context-parallel ranks (cp); realign's runtime runs "
            "every sequence whole on a rank (cp = 1)");
}

TEST(ContextParallelSearch, TheEnumerationKeepsCpOne) {
  const DataflowGraph g = testing::ppo_7b();
  const Cluster c = testing::h100(2);
  for (size_t i = 0; i < g.mfcs.size(); ++i)
    for (const Strategy& s : call_strategies(g, c, i, 16, false)) EXPECT_EQ(s.cp, 1) << to_string(s);
}

TEST(ContextParallelSearch, TheSimulatorPricesEachDegreeApart) {
  const DataflowGraph g = testing::ppo_7b();
  const Cluster c = testing::h100(1);
  Simulator sim(g, c, default_profile(c.device));
  const int train = g.mfc_index("actor_train");
  Strategy dp{8, 1, 1, 4};
  Strategy cp = dp, ulysses = dp;
  cp.dp = ulysses.dp = 4;
  cp.cp = ulysses.cp = 2;
  ulysses.cp_kind = ContextParallel::kUlysses;
  const double a = sim.call_estimate(train, {"actor_train", DeviceMesh{0, 8}, dp}).time_s;
  const double b = sim.call_estimate(train, {"actor_train", DeviceMesh{0, 8}, cp}).time_s;
  const double u = sim.call_estimate(train, {"actor_train", DeviceMesh{0, 8}, ulysses}).time_s;
  EXPECT_NE(a, b);  // memoised under keys that tell them apart
  EXPECT_NE(b, u);
  EXPECT_GT(b, 0);
}

}  // namespace
}  // namespace realign
