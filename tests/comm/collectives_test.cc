// Real multi-process runs of comm_test_worker over Gloo on loopback; each worker checks closed-form results.
#include <gtest/gtest.h>

#include "comm/launcher.h"

namespace realign::comm {
namespace {

LaunchResult run(int n, std::vector<std::string> args) {
  LaunchOptions o;
  o.nprocs = n;
  o.argv = {COMM_TEST_WORKER};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.forward_output = false;
  o.capture_output = true;
  o.timeout = std::chrono::seconds(60);
  return launch_local(o);
}

void expect_all_ok(const LaunchResult& r, const std::string& scenario) {
  ASSERT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
  for (size_t k = 0; k < r.output.size(); ++k)
    EXPECT_NE(r.output[k].find("rank " + std::to_string(k) + ": " + scenario + " ok"), std::string::npos)
        << r.output_text();
}

TEST(GlooCollectives, TwoRanks) { expect_all_ok(run(2, {"collectives"}), "collectives"); }

TEST(GlooCollectives, ThreeRanks) { expect_all_ok(run(3, {"collectives"}), "collectives"); }

TEST(GlooSubgroups, OrderedRankListsCachedNonMembersGetNothing) {
  expect_all_ok(run(4, {"subgroups"}), "subgroups");
}

TEST(GlooAxisGroups, D2T2P1) { expect_all_ok(run(4, {"layout", "d2t2p1"}), "layout"); }

TEST(GlooAxisGroups, D1T2P2) { expect_all_ok(run(4, {"layout", "d1t2p2"}), "layout"); }

TEST(GlooAxisGroups, OffsetLayoutLeavesOtherRanksOut) {
  expect_all_ok(run(4, {"layout", "d1t1p2@2"}), "layout");
}

}  // namespace
}  // namespace realign::comm
