// World's state, shared by its two halves: world.cc (the rendezvous of groups and their registry) and
// watchdog.cc (heartbeats, the abort key, leaving after a failure). Internal to comm/.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "comm/gloo_group.h"
#include "comm/world.h"

namespace realign::comm {
namespace detail {

inline std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
inline std::string str(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// c10::Error's what() carries a long C++ backtrace; the message alone names the cause.
std::string describe(const std::exception& e);

}  // namespace detail

struct World::Impl {
  Rendezvous rv;
  WorldOptions options;
  c10::intrusive_ptr<c10d::TCPStore> store;           // main thread: rendezvous of groups, abort
  c10::intrusive_ptr<c10d::TCPStore> watchdog_store;  // own connection: never queued behind a blocking wait
#if REALIGN_TORCH_HAS_GLOO
  std::shared_ptr<::gloo::transport::Device> device;
#endif
  std::shared_ptr<Group> global;
  std::map<std::vector<int>, std::shared_ptr<Group>> groups;

  std::string label;  // this rank's "host NAME (ADDRESS)"
  std::atomic<bool> aborting{false};
  std::atomic<bool> heartbeat_armed{false};
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread watchdog, store_monitor;
  // When the watchdog last completed a round of store calls; the monitor ends the process when the store
  // has been unreachable (a partitioned network blocks a store call instead of failing it) for too long.
  std::atomic<int64_t> store_ok_ms{0};
  std::atomic<int64_t> abort_started_ms{0};
  std::string abort_cause;  // under mu

  static int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // "rank R on host NAME (ADDRESS)", as rank R wrote it at rendezvous ("rank R" if it never did).
  std::string who(c10d::Store& s, int r);

  // Ranks (other than this one, not done) whose heartbeat does not move over `window`: after a collective
  // broke, they are the ranks that died (a killed process closes its connections, so its peers' collectives
  // fail at once, before anyone could say who is gone). Empty when the watchdog is off.
  std::vector<int> silent_ranks(std::chrono::milliseconds window);

  // Ends the process after a failure. The rank hosting the store keeps it up until every other rank has
  // left (at most 5 s: a dead rank never says so), so that none loses the store before it read the abort
  // message or named a silent rank.
  // `reach_store` false: the store does not answer (a call could block for good), leave at once.
  [[noreturn]] void leave(const std::string& message, int code, bool reach_store = true);

  // Ends the watchdog and the store monitor and waits for them.
  void stop_threads();
  // Ends the process when the store has not answered for heartbeat_timeout, or an abort's store calls block.
  void store_monitor_loop();
  // Beats this rank's heartbeat, leaves when another rank aborted, and on rank 0 aborts the run when a rank's
  // heartbeat stops.
  void watchdog_loop();
  // First writer wins the abort key; the others only log.
  void publish_abort(c10d::Store& s, const std::string& message);

  // The Gloo group of `ranks` (world.cc), this rank being `group_rank` in it.
  std::shared_ptr<Group> build(const std::vector<int>& ranks, int group_rank);
};

}  // namespace realign::comm
