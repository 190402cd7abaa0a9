// A 2 x 2 cluster over two hosts (network namespaces joined by a veth pair; see two_hosts.h), workers started
// with torchrun's variables and a run directory per host, as on a cluster without a shared filesystem: the
// run gives the metrics of the same cluster started locally; a worker killed on the second host ends every
// rank on both hosts with a message naming it; and the run resumed across both hosts, rank 0 alone reading
// the run directory, gives the uninterrupted run's metrics.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "testing/temp_dir.h"
#include "train_cli.h"
#include "two_hosts.h"

namespace realign {
namespace {
using testing::TempDir;
using testing::TwoHosts;
namespace fs = std::filesystem;

constexpr int kPerHost = 2, kHosts = 2;

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The same small job everywhere: the built-in PPO example on 2 nodes x 2 devices, a few steps.
std::string job(int rl_steps) {
  return std::string(REALIGN_SOURCE_DIR) +
         "/examples/addition_ppo.yaml cluster.nodes=2 cluster.devices_per_node=2 batch.prompts=8"
         " train.sft_stage.steps=2 train.eval_prompts=4 train.threads=1 train.steps=" +
         std::to_string(rl_steps) + " --no-progress --preset-steps 0";
}

// The local run, which also searches the plan the two-host runs are given (plan.mode=file), so that a
// search cut short by its time budget cannot hand the two runs different plans.
std::map<int64_t, Json> local_run(const TempDir& tmp, int rl_steps) {
  std::string out;
  EXPECT_EQ(testing::run_realign("train " + job(rl_steps) +
                                     " plan.mode=search train.checkpoint_every=0 --out " + tmp.file("local"),
                                 &out),
            0)
      << out;
  return testing::read_metrics(tmp.file("local"));
}

std::string plan_of_local(const TempDir& tmp) {
  return " plan.mode=file plan.file=" + tmp.file("local") + "/plan.json";
}

// Starts ranks 0..3 (0, 1 on host 0; 2, 3 on host 1), each with `args_of(rank)` after `realign`.
std::vector<int> start_ranks(TwoHosts& hosts, const TempDir& tmp, const std::string& tag,
                             const std::function<std::string(int)>& args_of) {
  std::vector<int> pids;
  for (int rank = 0; rank < kPerHost * kHosts; ++rank) {
    std::vector<std::string> argv = {REALIGN_BINARY};
    for (const std::string& w : words(args_of(rank))) argv.push_back(w);
    pids.push_back(hosts.start(rank / kPerHost, testing::torchrun_env(hosts, rank, kPerHost, kHosts), argv,
                               tmp.file(tag + "-rank" + std::to_string(rank) + ".log")));
  }
  return pids;
}

std::string logs(const TempDir& tmp, const std::string& tag) {
  std::string out;
  for (int rank = 0; rank < kPerHost * kHosts; ++rank) {
    const std::string f = tmp.file(tag + "-rank" + std::to_string(rank) + ".log");
    out += "--- rank " + std::to_string(rank) + "\n" + (fs::exists(f) ? testing::read_file(f) : "");
  }
  return out;
}

// Polls (at most 120 s) until `path` exists and is not empty.
void wait_for_file(const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((!fs::exists(path) || fs::file_size(path) == 0) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Each of `ranks` must exit with an error within 60 s of `since` (what `event` names).
void expect_end_within_a_minute(TwoHosts& hosts, const std::vector<int>& pids, const std::vector<int>& ranks,
                                std::chrono::steady_clock::time_point since, const std::string& event,
                                const std::function<std::string()>& logs_text) {
  for (int rank : ranks) {
    const auto left = std::chrono::seconds(60) - (std::chrono::steady_clock::now() - since);
    const int status = hosts.wait(pids[rank], std::chrono::duration_cast<std::chrono::milliseconds>(left));
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        << "rank " << rank << " (wait status " << status << ") did not end with an error within 60 s of "
        << event << "\n"
        << logs_text();
  }
}

void expect_same_metrics(const std::map<int64_t, Json>& a, const std::map<int64_t, Json>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [step, rec] : a)
    for (const auto& [key, value] : rec.items())
      if (key.rfind("time/", 0) != 0) {
        EXPECT_EQ(b.at(step)[key], value) << "step " << step << " " << key;
      }
}

TEST(MultiHost, TwoHostsWithARunDirectoryEachGiveTheLocalClustersMetrics) {
  TempDir tmp;
  TwoHosts hosts;
  ASSERT_EQ(hosts.error(), "");
  const auto local = local_run(tmp, 2);
  ASSERT_FALSE(local.empty());

  const std::vector<int> pids = start_ranks(hosts, tmp, "run", [&](int rank) {
    return "train " + job(2) + plan_of_local(tmp) + " train.checkpoint_every=0 --out " +
           tmp.file("host" + std::to_string(rank / kPerHost));
  });
  for (int rank = 0; rank < 4; ++rank) {
    const int status = hosts.wait(pids[rank], std::chrono::seconds(120));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << rank << "\n" << logs(tmp, "run");
  }
  EXPECT_TRUE(fs::exists(tmp.file("host0") + "/checkpoints/latest"));
  EXPECT_FALSE(fs::exists(tmp.file("host1"))) << "the second host writes no run directory";
  expect_same_metrics(local, testing::read_metrics(tmp.file("host0")));
}

TEST(MultiHost, AWorkerKilledOnTheSecondHostEndsBothHostsAndTheRunResumesAcrossThem) {
  TempDir tmp;
  TwoHosts hosts;
  ASSERT_EQ(hosts.error(), "");
  const int rl_steps = 12, total = 2 + rl_steps;
  const auto uninterrupted = local_run(tmp, rl_steps);
  ASSERT_FALSE(uninterrupted.empty());

  // A checkpoint every step; rank 3 (host 1) is killed once the first one is written.
  std::vector<int> pids = start_ranks(hosts, tmp, "killed", [&](int rank) {
    return "train " + job(rl_steps) + plan_of_local(tmp) + " train.checkpoint_every=1 --out " +
           tmp.file("host" + std::to_string(rank / kPerHost));
  });
  const std::string checkpoints = tmp.file("host0") + "/checkpoints";
  wait_for_file(checkpoints + "/latest");
  ASSERT_EQ(::kill(pids[3], SIGKILL), 0);
  expect_end_within_a_minute(hosts, pids, {0, 1, 2}, std::chrono::steady_clock::now(), "the kill",
                             [&] { return logs(tmp, "killed"); });
  for (int rank = 0; rank < 3; ++rank) {
    const std::string log = testing::read_file(tmp.file("killed-rank" + std::to_string(rank) + ".log"));
    EXPECT_NE(log.find("rank 3 on host "), std::string::npos) << "rank " << rank << ":\n" << log;
    EXPECT_NE(log.find("(" + TwoHosts::address(1) + ") failed"), std::string::npos)
        << "rank " << rank << ":\n"
        << log;
  }
  hosts.wait(pids[3], std::chrono::seconds(5));
  const std::string pointer = testing::read_file(checkpoints + "/latest");  // "step-N"
  ASSERT_EQ(pointer.rfind("step-", 0), 0u) << pointer;
  const std::optional<int> latest = std::stoi(pointer.substr(5));
  ASSERT_LT(*latest, total) << "the run finished before the kill: nothing left to resume";

  // The same command on both hosts; the second host's --resume names a directory it does not have.
  pids = start_ranks(hosts, tmp, "resumed", [&](int rank) {
    return "train --resume " + tmp.file(rank < kPerHost ? "host0" : "absent-on-host1") + " --no-progress";
  });
  for (int rank = 0; rank < 4; ++rank) {
    const int status = hosts.wait(pids[rank], std::chrono::seconds(120));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << rank << "\n"
                                                               << logs(tmp, "resumed");
  }
  EXPECT_NE(testing::read_file(tmp.file("resumed-rank0.log")).find("steps " + std::to_string(*latest + 1)),
            std::string::npos)
      << logs(tmp, "resumed");
  EXPECT_FALSE(fs::exists(tmp.file("absent-on-host1")));
  expect_same_metrics(uninterrupted, testing::read_metrics(tmp.file("host0")));
}

// The second host drops off the network mid-run (its end of the link goes down): rank 0 names its ranks when
// their heartbeats stop, and they exit when the store stops answering. The heartbeat timeout is cut to 3 s
// here to keep the test short; at the default 30 s the same happens within a minute.
TEST(MultiHost, AHostThatDropsOffTheNetworkEndsEveryRank) {
  TempDir tmp;
  TwoHosts hosts;
  ASSERT_EQ(hosts.error(), "");
  std::vector<int> pids;
  for (int rank = 0; rank < kPerHost * kHosts; ++rank) {
    auto env = testing::torchrun_env(hosts, rank, kPerHost, kHosts);
    env["REALIGN_HEARTBEAT_TIMEOUT_S"] = "3";
    std::vector<std::string> argv = {REALIGN_BINARY};
    for (const std::string& w :
         words("train " + job(1000) + " plan.mode=co-located train.checkpoint_every=0 --out " +
               tmp.file("host" + std::to_string(rank / kPerHost))))
      argv.push_back(w);
    pids.push_back(
        hosts.start(rank / kPerHost, env, argv, tmp.file("cut-rank" + std::to_string(rank) + ".log")));
  }
  // Once training runs (rank 0 wrote a step's metrics), the link goes down.
  wait_for_file(tmp.file("host0") + "/metrics.jsonl");
  ASSERT_TRUE(hosts.cut(1));
  expect_end_within_a_minute(hosts, pids, {0, 1, 2, 3}, std::chrono::steady_clock::now(), "the cut",
                             [&] { return logs(tmp, "cut"); });
  for (int rank : {0, 1}) {
    const std::string log = testing::read_file(tmp.file("cut-rank" + std::to_string(rank) + ".log"));
    EXPECT_NE(log.find("(" + TwoHosts::address(1) + ") failed: no heartbeat"), std::string::npos) << log;
  }
  for (int rank : {2, 3}) {
    const std::string log = testing::read_file(tmp.file("cut-rank" + std::to_string(rank) + ".log"));
    EXPECT_NE(log.find("the rendezvous store at " + TwoHosts::address(0) + ":29500 has not answered"),
              std::string::npos)
        << log;
  }
}

}  // namespace
}  // namespace realign
