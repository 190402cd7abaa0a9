// World: this process's place in a multi-process run: rendezvous on a c10d TCPStore (torchrun's environment:
// MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK), the global Gloo group, subgroups over any ordered
// rank list, the dp/tp/pp axis groups of a plan::Layout, and failure handling (abort key + watchdog).
//
// Contract: as comm/group.h (all members call collectives in the same order). Building a subgroup is itself
// collective over its members: every member calls subgroup(ranks) (non-members need not; they get nullptr),
// and members build their groups in the same order. A group for a given rank list is built once per process
// and cached. Global ranks are device indices: rank r runs on device r of the cluster. A World is used from
// one thread (groups are built and used in program order).
//
// Failure handling (a run must never hang when one rank dies or throws):
// - every collective has a timeout (WorldOptions::timeout; env REALIGN_COMM_TIMEOUT_S, default 300 s);
// - every rank names itself "rank R on host NAME (ADDRESS)" (the address it reaches the master from: hosts
//   may share a hostname), in messages and in the store for the others' messages;
// - a rank that fails calls abort(cause) (run_worker does it for an escaping exception): it writes
//   "rank R on host H failed: cause" under an abort key in the store, so that the others' watchdog threads,
//   polling that key, print "rank <self> on host H' exiting: rank R ... failed: cause" and exit with
//   kPeerAbortExitCode, even from inside a blocked collective;
// - a killed process closes its connections, so its peers' collectives break before anyone says why: a rank
//   aborting first looks for ranks whose heartbeat stopped (for 2 s) and names them as the cause;
// - each watchdog bumps a heartbeat counter in the store; rank 0 declares a rank dead (and aborts the run)
//   when its counter has not moved for heartbeat_timeout (env REALIGN_HEARTBEAT_TIMEOUT_S, default 30 s, so
//   that an unreachable host ends the run within a minute);
// - losing the store (the process hosting it died), or the store not answering for heartbeat_timeout (the
//   network to it is down), makes the rank exit with that message.
// Under the local launcher (comm/launcher.h) the launcher additionally kills everyone when one rank fails.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/group.h"
#include "comm/layout_axes.h"  // axis_ranks, for the callers of axis_groups
#include "plan/layout.h"

namespace realign::comm {

// Exit code of a rank that stopped because another rank failed (so a launcher can tell cause from effect).
constexpr int kPeerAbortExitCode = 3;

// Where to meet, from torchrun-style environment variables.
struct Rendezvous {
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  // The store is hosted by someone else (torchrun's agent: TORCHELASTIC_USE_AGENT_STORE=True, or our local
  // launcher); otherwise rank 0 hosts it.
  bool external_store = false;
};
// Reads MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK (default: RANK), TORCHELASTIC_USE_AGENT_STORE.
// Throws realign::Error naming the variable when one is missing or malformed.
Rendezvous rendezvous_from_env();

struct WorldOptions {
  std::chrono::milliseconds timeout{300'000};  // per collective and for the rendezvous
  bool watchdog = true;                        // abort-key polling and heartbeats
  std::chrono::milliseconds watchdog_interval{200};
  std::chrono::milliseconds heartbeat_timeout{30'000};
};
// Defaults, overridden by REALIGN_COMM_TIMEOUT_S and REALIGN_HEARTBEAT_TIMEOUT_S (seconds, may be
// fractional).
WorldOptions world_options_from_env();

// The groups of one rank in a Layout. A group of one rank is single_rank_group() (no process group built).
// ep and edp (expert_ranks, expert_data_ranks) are built only when layout.ep > 1; null otherwise.
struct AxisGroups {
  Layout::Coord coord;
  std::shared_ptr<Group> dp, tp, pp;
  std::shared_ptr<Group> ep, edp;
};

class World {
 public:
  World(const Rendezvous& rendezvous, const WorldOptions& options);
  ~World();  // waits (bounded) for all ranks to finish with the store before rank 0 closes it
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  static std::unique_ptr<World> from_env() {
    return std::make_unique<World>(rendezvous_from_env(), world_options_from_env());
  }

  int rank() const;
  int size() const;
  int local_rank() const;
  const WorldOptions& options() const;

  std::shared_ptr<Group> global();
  // The group over `ranks` (global ranks, in group-rank order; distinct, in range). nullptr when this rank is
  // not a member. Cached: the same list gives the same group.
  std::shared_ptr<Group> subgroup(const std::vector<int>& ranks);
  // This rank's dp/tp/pp (and ep/edp) groups in `layout` (built in the order tp, dp, pp, ep, edp, so that all
  // ranks of the layout calling it cannot deadlock); nullopt when this rank is outside the layout's devices.
  std::optional<AxisGroups> axis_groups(const Layout& layout);

  // Marks the run failed and prints why to stderr. The first rank to abort writes "rank R failed: cause" to
  // the abort key and gets true; a later one (typically its collective broke because of the first) prints
  // the first one's message with its own cause in brackets and gets false. Does not exit; run_worker exits
  // right after (1 when first, kPeerAbortExitCode otherwise).
  bool abort(const std::string& cause);
  // Ends the process with `code` after abort(). A rank hosting the store keeps it up (at most 5 s) until the
  // other ranks have left, so that each still reads the abort message.
  [[noreturn]] void leave_after_abort(int code);
  // The abort message, if some rank aborted (checks the store once).
  std::optional<std::string> abort_message();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A worker's main: builds the World from the environment, runs `body`; an exception escaping `body` (or the
// rendezvous) is reported with abort() and the process exits 1 at once (no destructors, which could block on
// peers). Returns 0 after a clean run.
int run_worker(const std::function<void(World&)>& body);

}  // namespace realign::comm
