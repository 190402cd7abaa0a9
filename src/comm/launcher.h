// Local launcher: starts N ranks of a program on this machine (fork+exec), the way torchrun would, and
// watches them. Used by `realign train` for single-machine runs and by every module's multi-process tests.
//
// Each child gets RANK, WORLD_SIZE, LOCAL_RANK (= RANK), LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT
// and TORCHELASTIC_USE_AGENT_STORE=True: the launcher itself hosts the TCPStore (on a free port it got by
// binding port 0), so the store outlives any one rank and the launcher can read a failing rank's abort
// message (comm/world.h). Failure rule: when a rank exits non-zero or dies by a signal, the launcher reports
// it ("rank 1 died: signal 9 (SIGKILL)", "rank 2 exited with code 1: rank 2 on host H (A) failed: <cause>"),
// sends SIGTERM to the others, SIGKILL after `grace`, and returns non-zero. A rank killed by a signal is
// reported before ranks that exited because of it; otherwise the rank named in the store's abort key is.
// Children get SIGTERM when the launcher itself dies (PR_SET_PDEATHSIG; call launch_local from a thread that
// outlives the run).
//
// How a module's test starts N ranks (see tests/comm for a complete example):
//   1. a helper executable (add_executable + target_link_libraries(... realign_comm)) whose main is
//        int main(int argc, char** argv) {
//          return realign::comm::run_worker([&](realign::comm::World& world) { ... world.global() ... });
//        }
//      It checks its own closed-form results and throws on a mismatch (the message names what differed).
//   2. in the gtest: pass the helper's path as a compile definition ($<TARGET_FILE:helper>), and
//        LaunchOptions o; o.nprocs = 4; o.argv = {HELPER_PATH, "scenario"}; o.capture_output = true;
//        LaunchResult r = launch_local(o);
//        EXPECT_EQ(r.exit_code, 0) << r.failure << r.output_text();
//   3. add_dependencies(<module>_tests helper) so the helper is built with the tests.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace realign::comm {

struct LaunchOptions {
  int nprocs = 1;
  std::vector<std::string> argv;  // program (a path) and its arguments; the same for every rank
  std::vector<std::pair<std::string, std::string>> env;  // extra variables for every rank
  bool forward_output = true;   // copy the ranks' stdout/stderr to ours, each line prefixed "[rank R] "
  bool capture_output = false;  // keep each rank's output (stdout and stderr interleaved) in the result
  bool kill_on_failure = true;  // false: only watch (tests of the workers' own failure handling)
  std::chrono::milliseconds grace{3000};  // SIGTERM -> SIGKILL
  std::chrono::milliseconds timeout{0};   // > 0: kill everyone after this long and report a timeout
};

struct RankExit {
  int rank = 0;
  int pid = 0;
  int exit_code = -1;  // when it exited; -1 when a signal ended it
  int signal = 0;      // the signal that ended it, or 0
  bool killed_by_launcher = false;
  std::chrono::milliseconds after{0};  // since launch
};

struct LaunchResult {
  int exit_code = 0;                // 0 when every rank exited 0; else 1
  std::string failure;              // the first failure, as described above; empty on success
  std::vector<RankExit> ranks;      // indexed by rank
  std::vector<std::string> output;  // per rank, when capture_output
  std::chrono::milliseconds wall{0};
  std::string output_text() const;  // every rank's captured output, "[rank R] " prefixed, for test messages
};

// Blocks until every rank has exited. Throws realign::Error when the program cannot be started.
LaunchResult launch_local(const LaunchOptions& options);

// The running program's path (/proc/self/exe), to start N copies of oneself (`realign train`).
std::string current_executable();

// "rank 1 died: signal 9 (SIGKILL)" / "rank 2 exited with code 1".
std::string describe_exit(const RankExit& exit);

}  // namespace realign::comm
