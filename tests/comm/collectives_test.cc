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

// One run, several layouts on the same 4 ranks (as a training run has): d1t2p2's groups are partly
// d2t2p1's (cached), d1t1p2@2 leaves ranks 0 and 1 out.
TEST(GlooAxisGroups, LayoutsOnFourRanks) {
  expect_all_ok(run(4, {"layout", "d2t2p1", "d1t2p2", "d1t1p2@2", "d1t4p1", "d4t1p1"}), "layout");
}

}  // namespace
}  // namespace realign::comm
