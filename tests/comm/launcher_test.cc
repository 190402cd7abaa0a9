// The local launcher with /bin/sh children: environment, output, exit codes and the failure rule.
#include "comm/launcher.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "core/error.h"

namespace realign::comm {
namespace {

LaunchOptions sh(int n, const std::string& script) {
  LaunchOptions o;
  o.nprocs = n;
  o.argv = {"/bin/sh", "-c", script};
  o.forward_output = false;
  o.capture_output = true;
  o.grace = std::chrono::milliseconds(1000);
  return o;
}

TEST(Launcher, SetsTorchrunEnvironmentPerRank) {
  LaunchResult r = launch_local(sh(3,
                                   "echo $RANK/$WORLD_SIZE/$LOCAL_RANK/$MASTER_ADDR/$MASTER_PORT/"
                                   "$TORCHELASTIC_USE_AGENT_STORE/$EXTRA; echo err$RANK >&2"));
  ASSERT_EQ(r.exit_code, 0) << r.failure;
  ASSERT_EQ(r.output.size(), 3u);
  std::string port;
  for (int k = 0; k < 3; ++k) {
    const std::string& out = r.output[k];
    const std::string prefix = std::to_string(k) + "/3/" + std::to_string(k) + "/127.0.0.1/";
    ASSERT_EQ(out.rfind(prefix, 0), 0u) << out;
    const std::string p = out.substr(prefix.size(), out.find('/', prefix.size()) - prefix.size());
    EXPECT_GT(std::stoi(p), 0);
    if (k > 0) {
      EXPECT_EQ(p, port);  // one store for all
    }
    port = p;
    EXPECT_NE(out.find("/True/\n"), std::string::npos) << out;
    EXPECT_NE(out.find("err" + std::to_string(k) + "\n"), std::string::npos) << out;
    EXPECT_EQ(r.ranks[k].exit_code, 0);
  }
  EXPECT_NE(r.output_text().find("[rank 2] err2\n"), std::string::npos) << r.output_text();
}

TEST(Launcher, ExtraEnvironmentAndPartialLastLine) {
  LaunchOptions o = sh(1, "printf \"$EXTRA\"");
  o.env = {{"EXTRA", "value-without-newline"}};
  LaunchResult r = launch_local(o);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output[0], "value-without-newline\n");
}

TEST(Launcher, NonZeroExitKillsTheOthers) {
  // Rank 1 exits 7 at once; the others would sleep for a minute.
  LaunchResult r = launch_local(sh(3, "if [ $RANK = 1 ]; then exit 7; fi; exec sleep 60"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.failure, "rank 1 exited with code 7");
  EXPECT_LT(r.wall.count(), 10'000);
  EXPECT_EQ(r.ranks[0].signal, SIGTERM);
  EXPECT_TRUE(r.ranks[0].killed_by_launcher);
  EXPECT_EQ(r.ranks[2].signal, SIGTERM);
}

TEST(Launcher, KilledRankIsNamedAndSigkillFollowsIgnoredSigterm) {
  // Rank 0 kills itself; rank 1 ignores SIGTERM, so it takes the SIGKILL after the grace period.
  LaunchResult r = launch_local(sh(
      2, "if [ $RANK = 0 ]; then sleep 0.2; kill -9 $$; fi; trap '' TERM; while true; do sleep 0.1; done"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.failure, "rank 0 died: signal 9 (SIGKILL)");
  EXPECT_EQ(r.ranks[1].signal, SIGKILL);
  EXPECT_TRUE(r.ranks[1].killed_by_launcher);
  EXPECT_GE(r.ranks[1].after.count() - r.ranks[0].after.count(), 900);  // the 1 s grace
}

TEST(Launcher, WatchOnlyLetsOthersFinish) {
  LaunchOptions o = sh(2, "if [ $RANK = 1 ]; then exit 2; fi; sleep 0.5; echo done");
  o.kill_on_failure = false;
  LaunchResult r = launch_local(o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.failure, "rank 1 exited with code 2");
  EXPECT_EQ(r.ranks[0].exit_code, 0);
  EXPECT_EQ(r.output[0], "done\n");
}

TEST(Launcher, TimeoutKillsEveryone) {
  LaunchOptions o = sh(2, "exec sleep 30");
  o.timeout = std::chrono::milliseconds(500);
  LaunchResult r = launch_local(o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.failure.find("timed out after 0.5"), std::string::npos) << r.failure;
  EXPECT_LT(r.wall.count(), 5'000);
}

TEST(Launcher, CurrentExecutableIsThisTestBinary) {
  const std::string self = current_executable();
  EXPECT_EQ(self.substr(self.rfind('/') + 1), "comm_tests");
}

TEST(Launcher, MissingProgramIsAnError) {
  LaunchOptions o;
  o.nprocs = 2;
  o.argv = {"/nonexistent/worker"};
  EXPECT_THROW(launch_local(o), Error);
}

}  // namespace
}  // namespace realign::comm
