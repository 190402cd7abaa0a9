// Failure handling: a rank killed or throwing ends the whole run quickly, with the rank and the cause named,
// both under the local launcher and (kill_on_failure = false) by the workers' own watchdogs, as under
// torchrun/srun.
#include <gtest/gtest.h>

#include "comm/launcher.h"
#include "comm/world.h"

namespace realign::comm {
namespace {

LaunchOptions worker(int n, std::vector<std::string> args) {
  LaunchOptions o;
  o.nprocs = n;
  o.argv = {COMM_TEST_WORKER};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.forward_output = false;
  o.capture_output = true;
  o.timeout = std::chrono::seconds(60);
  return o;
}

TEST(Failure, KilledRankEndsTheRunWithItsName) {
  LaunchResult r = launch_local(worker(3, {"kill", "1"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.failure.rfind("rank 1 died: signal 9 (SIGKILL)", 0), 0u) << r.failure << "\n"
                                                                       << r.output_text();
  EXPECT_LT(r.wall.count(), 20'000);
}

TEST(Failure, ThrowingRankEndsTheRunWithItsCause) {
  LaunchResult r = launch_local(worker(3, {"throw", "2"}));
  EXPECT_EQ(r.exit_code, 1);
  // Under load a peer may learn of the failure and exit before rank 2's own exit is seen; either way the
  // run's failure names rank 2 and its cause.
  EXPECT_NE(r.failure.find("exited with code 1: rank 2 on host "), std::string::npos) << r.failure << "\n"
                                                                                      << r.output_text();
  EXPECT_NE(r.failure.find("(127.0.0.1) failed: injected failure on rank 2"), std::string::npos) << r.failure;
  EXPECT_NE(r.output[2].find("realign: rank 2 on host "), std::string::npos) << r.output_text();
  EXPECT_NE(r.output[2].find("failed: injected failure on rank 2"), std::string::npos) << r.output_text();
}

// Without the launcher's killing, every rank must still exit non-zero on its own, naming the failed rank.
TEST(Failure, WithoutLauncherKillsAllRanksExitAfterAThrow) {
  LaunchOptions o = worker(3, {"throw", "0"});
  o.kill_on_failure = false;
  LaunchResult r = launch_local(o);
  for (const RankExit& e : r.ranks) {
    EXPECT_EQ(e.signal, 0) << describe_exit(e);
    EXPECT_NE(e.exit_code, 0) << describe_exit(e);
  }
  for (int k = 1; k < 3; ++k)
    EXPECT_NE(r.output[k].find("rank 0 on host "), std::string::npos) << r.output_text();
  for (int k = 1; k < 3; ++k)
    EXPECT_NE(r.output[k].find("(127.0.0.1) failed: injected failure on rank 0"), std::string::npos)
        << r.output_text();
  EXPECT_LT(r.wall.count(), 20'000);
}

TEST(Failure, WithoutLauncherKillsPeersOfAKilledRankExit) {
  LaunchOptions o = worker(3, {"kill", "2"});
  o.kill_on_failure = false;
  LaunchResult r = launch_local(o);
  EXPECT_EQ(r.failure.rfind("rank 2 died: signal 9 (SIGKILL)", 0), 0u) << r.failure;
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(r.ranks[k].signal, 0);
    EXPECT_NE(r.ranks[k].exit_code, 0);
    // Its peers' collectives broke; they name the rank whose heartbeat stopped, not themselves.
    EXPECT_NE(r.output[k].find("rank 2 on host "), std::string::npos) << r.output_text();
    EXPECT_NE(r.output[k].find("(127.0.0.1) failed: stopped"), std::string::npos) << r.output_text();
  }
  EXPECT_LT(r.wall.count(), 20'000);
}

TEST(Failure, HeartbeatCatchesASilentDeath) {
  LaunchOptions o = worker(3, {"silent-death", "1"});
  o.kill_on_failure = false;
  o.env = {{"REALIGN_HEARTBEAT_TIMEOUT_S", "2"}};
  LaunchResult r = launch_local(o);
  for (int k : {0, 2}) {
    EXPECT_EQ(r.ranks[k].exit_code, kPeerAbortExitCode) << describe_exit(r.ranks[k]) << "\n"
                                                        << r.output_text();
    EXPECT_NE(r.output[k].find("rank 1 on host "), std::string::npos) << r.output_text();
    EXPECT_NE(r.output[k].find("(127.0.0.1) failed: no heartbeat for 2 s"), std::string::npos)
        << r.output_text();
  }
  EXPECT_LT(r.wall.count(), 15'000);
}

TEST(Failure, CollectiveTimeoutEndsAStuckRun) {
  LaunchOptions o = worker(2, {"stuck", "1"});
  o.kill_on_failure = false;
  o.env = {{"REALIGN_COMM_TIMEOUT_S", "2"}};
  LaunchResult r = launch_local(o);
  EXPECT_EQ(r.ranks[0].exit_code, 1) << r.output_text();
  EXPECT_EQ(r.ranks[1].exit_code, kPeerAbortExitCode) << r.output_text();
  EXPECT_NE(r.output[1].find("rank 0 on host "), std::string::npos) << r.output_text();
  EXPECT_NE(r.output[1].find("(127.0.0.1) failed: "), std::string::npos) << r.output_text();
  EXPECT_LT(r.wall.count(), 15'000);
}

}  // namespace
}  // namespace realign::comm
