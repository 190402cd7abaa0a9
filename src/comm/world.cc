#include "comm/world.h"

#include <arpa/inet.h>
#include <c10/util/Exception.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "comm/gloo_group.h"
#include "comm/store_keys.h"
#include "core/check.h"
#include "core/error.h"

namespace realign::comm {
namespace {

std::string getenv_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

int env_int(const char* name, std::optional<int> fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) {
    if (fallback) return *fallback;
    throw Error(name,
                "environment variable is not set (start workers with torchrun, srun + these variables, "
                "or realign's local launcher)");
  }
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi)
    throw Error(name, std::string("'") + v + "' is not an integer in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
  return static_cast<int>(x);
}

std::optional<std::chrono::milliseconds> env_seconds(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (*end != '\0' || !(s > 0) || s > 1e7)
    throw Error(name, std::string("'") + v + "' is not a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

std::string join(const std::vector<int>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str();
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string str(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// c10::Error's what() carries a long C++ backtrace; the message alone names the cause.
std::string describe(const std::exception& e) {
  if (auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

// Prints and leaves at once: called from the watchdog while the main thread may be blocked in a collective.
[[noreturn]] void exit_now(const std::string& message, int code) {
  std::fprintf(stderr, "realign: %s\n", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

// The address this process reaches the master from ("" if there is no route). A UDP connect() only picks
// the route; nothing is sent.
std::string address_toward_master(const Rendezvous& rv) {
  std::string address;
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_DGRAM;
  if (::getaddrinfo(rv.master_addr.c_str(), std::to_string(rv.master_port).c_str(), &hints, &found) == 0) {
    const int fd = ::socket(found->ai_family, SOCK_DGRAM, 0);
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char text[INET6_ADDRSTRLEN] = {0};
    if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::getnameinfo(reinterpret_cast<sockaddr*>(&local), len, text, sizeof text, nullptr, 0,
                      NI_NUMERICHOST) == 0)
      address = text;
    if (fd >= 0) ::close(fd);
    ::freeaddrinfo(found);
  }
  return address;
}

// "host NAME (ADDRESS)", so a message about a rank on another machine says which machine (hosts in network
// namespaces share a hostname, not an address).
std::string host_label(const std::string& address) {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "?");
  return "host " + std::string(name) + " (" + (address.empty() ? "?" : address) + ")";
}

c10::intrusive_ptr<c10d::TCPStore> connect_store(const Rendezvous& rv, bool server,
                                                 std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(rv.master_port);
  o.isServer = server;
  o.numWorkers = c10::nullopt;
  o.waitWorkers = false;
  o.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(rv.master_addr, o);
}

}  // namespace

Rendezvous rendezvous_from_env() {
  Rendezvous rv;
  rv.master_addr = getenv_or("MASTER_ADDR", "");
  if (rv.master_addr.empty()) throw Error("MASTER_ADDR", "environment variable is not set");
  rv.master_port = env_int("MASTER_PORT", std::nullopt, 1, 65535);
  rv.world_size = env_int("WORLD_SIZE", std::nullopt, 1, 1 << 20);
  rv.rank = env_int("RANK", std::nullopt, 0, rv.world_size - 1);
  rv.local_rank = env_int("LOCAL_RANK", rv.rank, 0, rv.world_size - 1);
  rv.external_store = getenv_or("TORCHELASTIC_USE_AGENT_STORE", "") == "True";
  return rv;
}

WorldOptions world_options_from_env() {
  WorldOptions o;
  if (auto t = env_seconds("REALIGN_COMM_TIMEOUT_S")) o.timeout = *t;
  if (auto t = env_seconds("REALIGN_HEARTBEAT_TIMEOUT_S")) o.heartbeat_timeout = *t;
  return o;
}

namespace {

int& coordinate(Layout::Coord& c, LayoutAxis axis) {
  switch (axis) {
    case LayoutAxis::kData:
      return c.dp;
    case LayoutAxis::kTensor:
      return c.tp;
    case LayoutAxis::kPipeline:
      return c.pp;
  }
  REALIGN_CHECK(false) << "axis " << int(axis);
  return c.dp;
}

}  // namespace

std::vector<int> axis_ranks(const Layout& layout, int rank, LayoutAxis axis) {
  const Layout::Coord c = layout.coord_of(rank);
  Layout::Coord size{layout.dp, layout.tp, layout.pp};
  std::vector<int> out;
  for (int i = 0; i < coordinate(size, axis); ++i) {
    Layout::Coord x = c;
    coordinate(x, axis) = i;
    out.push_back(layout.device_of(x));
  }
  return out;
}

struct World::Impl {
  Rendezvous rv;
  WorldOptions options;
  c10::intrusive_ptr<c10d::TCPStore> store;           // main thread: rendezvous of groups, abort
  c10::intrusive_ptr<c10d::TCPStore> watchdog_store;  // own connection: never queued behind a blocking wait
  std::shared_ptr<::gloo::transport::Device> device;
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
  std::string who(c10d::Store& s, int r) {
    std::string out = "rank " + std::to_string(r);
    try {
      if (s.check({keys::host(r)})) out += " on " + str(s.get(keys::host(r)));
    } catch (const std::exception&) {
    }
    return out;
  }

  // Ranks (other than this one, not done) whose heartbeat does not move over `window`: after a collective
  // broke, they are the ranks that died (a killed process closes its connections, so its peers' collectives
  // fail at once, before anyone could say who is gone). Empty when the watchdog is off.
  std::vector<int> silent_ranks(std::chrono::milliseconds window) {
    std::vector<int> out;
    if (!options.watchdog) return out;
    std::vector<int64_t> before(rv.world_size);
    for (int r = 0; r < rv.world_size; ++r) before[r] = store->add(keys::heartbeat(r), 0);
    std::this_thread::sleep_for(window);
    for (int r = 0; r < rv.world_size; ++r)
      if (r != rv.rank && store->add(keys::heartbeat(r), 0) == before[r] && !store->check({keys::done(r)}))
        out.push_back(r);
    return out;
  }

  // Ends the process after a failure. The rank hosting the store keeps it up until every other rank has
  // left (at most 5 s: a dead rank never says so), so that none loses the store before it read the abort
  // message or named a silent rank.
  // `reach_store` false: the store does not answer (a call could block for good), leave at once.
  [[noreturn]] void leave(const std::string& message, int code, bool reach_store = true) {
    if (!message.empty()) std::fprintf(stderr, "realign: %s\n", message.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    if (!reach_store) std::_Exit(code);
    try {
      c10d::Store& s = watchdog_store ? *watchdog_store : *store;
      const int64_t left = s.add(keys::kLeftCount, 1);
      if (rv.rank == 0 && !rv.external_store) {
        const int64_t until = now_ms() + 5000;
        for (int64_t n = left; n < rv.world_size && now_ms() < until; n = s.add(keys::kLeftCount, 0))
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    } catch (const std::exception&) {
    }
    std::_Exit(code);
  }

  void stop_threads() {
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
    }
    cv.notify_all();
    if (watchdog.joinable()) watchdog.join();
    if (store_monitor.joinable()) store_monitor.join();
  }

  void store_monitor_loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::seconds(1), [&] { return stop; })) {
      const double silent_s = double(now_ms() - store_ok_ms) / 1000;
      // An abort whose store calls block (the store's host unreachable) must not keep the process alive.
      if (aborting && now_ms() - abort_started_ms > 10'000)
        leave("rank " + std::to_string(rv.rank) + " on " + label + " failed: " + abort_cause +
                  "; exiting unreported: the rendezvous store at " + rv.master_addr + ":" +
                  std::to_string(rv.master_port) +
                  " has not answered for 10 s (network down, or its host gone)",
              1, false);
      if (silent_s * 1000 > double(options.heartbeat_timeout.count()) && !aborting)
        leave("rank " + std::to_string(rv.rank) + " on " + label + " exiting: the rendezvous store at " +
                  rv.master_addr + ":" + std::to_string(rv.master_port) + " has not answered for " +
                  std::to_string(int(silent_s)) + " s (network down, or its host gone)",
              kPeerAbortExitCode, false);
    }
  }

  std::shared_ptr<Group> build(const std::vector<int>& ranks, int group_rank) {
    auto prefix = c10::make_intrusive<c10d::PrefixStore>("realign/group/" + join(ranks), store);
    auto opts = c10d::ProcessGroupGloo::Options::create(options.timeout);
    opts->devices.push_back(device);
    opts->threads = 1;  // every collective here is blocking; more workers only add idle threads
    return make_gloo_group(c10::make_intrusive<c10d::ProcessGroupGloo>(prefix, group_rank,
                                                                       static_cast<int>(ranks.size()), opts));
  }

  // First writer wins the abort key; the others only log.
  void publish_abort(c10d::Store& s, const std::string& message) {
    if (s.add(keys::kAbortCount, 1) == 1) s.set(keys::kAbort, bytes(message));
  }

  void watchdog_loop() {
    const auto interval = options.watchdog_interval;
    std::vector<int64_t> last_beat(rv.world_size, -1);
    std::vector<std::chrono::steady_clock::time_point> last_change(rv.world_size,
                                                                   std::chrono::steady_clock::now());
    std::chrono::steady_clock::time_point last_scan{};
    int store_failures = 0;
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, interval, [&] { return stop; })) {
      lock.unlock();
      try {
        if (!aborting && watchdog_store->check({keys::kAbort})) {
          const std::string msg = str(watchdog_store->get(keys::kAbort));
          leave("rank " + std::to_string(rv.rank) + " on " + label + " exiting: " + msg, kPeerAbortExitCode);
        }
        watchdog_store->add(keys::heartbeat(rv.rank), 1);
        const auto now = std::chrono::steady_clock::now();
        // Rank 0 watches everyone's heartbeat, about once a second (world_size store calls each time).
        // Armed once the global group exists: by then every rank has connected and its watchdog beats, so a
        // slow start is not mistaken for a death.
        if (rv.rank == 0 && heartbeat_armed && now - last_scan >= std::chrono::seconds(1)) {
          if (last_scan == std::chrono::steady_clock::time_point{})
            std::fill(last_change.begin(), last_change.end(), now);
          last_scan = now;
          for (int r = 1; r < rv.world_size; ++r) {
            const int64_t beat = watchdog_store->add(keys::heartbeat(r), 0);
            if (beat != last_beat[r]) {
              last_beat[r] = beat;
              last_change[r] = now;
            } else if (now - last_change[r] > options.heartbeat_timeout &&
                       !watchdog_store->check({keys::done(r)})) {
              const double s = std::chrono::duration<double>(options.heartbeat_timeout).count();
              std::ostringstream msg;
              msg << who(*watchdog_store, r) << " failed: no heartbeat for " << s
                  << " s (process died, is stuck, or its host is unreachable; noticed by rank 0)";
              publish_abort(*watchdog_store, msg.str());
              leave("rank 0 on " + label + " exiting: " + msg.str(), kPeerAbortExitCode);
            }
          }
        }
        store_failures = 0;
        store_ok_ms = now_ms();
      } catch (const std::exception& e) {
        // The store's host (launcher, torchrun agent or rank 0) is gone: the run cannot go on.
        if (++store_failures >= 3 && !aborting)
          exit_now("rank " + std::to_string(rv.rank) + " on " + label +
                       " exiting: lost the rendezvous store at " + rv.master_addr + ":" +
                       std::to_string(rv.master_port) + " (" +
                       (rv.external_store ? "the launcher" : "rank 0") +
                       ", its host, died or is unreachable): " + describe(e).substr(0, 300),
                   kPeerAbortExitCode);
      }
      lock.lock();
    }
  }
};

World::World(const Rendezvous& rv, const WorldOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.rv = rv;
  m.options = options;
  const bool server = rv.rank == 0 && !rv.external_store;
  m.store = connect_store(rv, server, options.timeout);
  if (options.watchdog) m.watchdog_store = connect_store(rv, false, options.timeout);
  const std::string address = address_toward_master(rv);
  // Gloo's own default binds to the address the hostname resolves to, which on many hosts is a loopback one
  // (Debian maps it to 127.0.1.1) that the other hosts cannot reach: without GLOO_SOCKET_IFNAME, ranks listen
  // on the address their route to the master leaves from.
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
    m.device = c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  else if (rv.master_addr == "127.0.0.1" || rv.master_addr == "localhost")
    m.device = c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  else if (!address.empty())
    m.device = c10d::ProcessGroupGloo::createDeviceForHostname(address);
  else
    m.device = c10d::ProcessGroupGloo::createDefaultDevice();
  m.label = host_label(address);
  m.store->set(keys::host(rv.rank), bytes(m.label));
  m.store_ok_ms = Impl::now_ms();
  if (options.watchdog) {
    m.watchdog = std::thread([&m] { m.watchdog_loop(); });
    m.store_monitor = std::thread([&m] { m.store_monitor_loop(); });
  }
  std::vector<int> all(rv.world_size);
  for (int r = 0; r < rv.world_size; ++r) all[r] = r;
  try {
    m.global = rv.world_size == 1 ? single_rank_group() : m.build(all, rv.rank);
  } catch (...) {
    m.stop_threads();  // a joinable thread must not be destroyed by the unwinding
    throw;
  }
  m.heartbeat_armed = true;
  m.groups[all] = m.global;
}

World::~World() {
  Impl& m = *impl_;
  // Say "done" while the watchdog still runs: rank 0 stops expecting heartbeats from a done rank, and a rank
  // still waiting below is still woken by an abort.
  if (!m.aborting) {
    try {
      m.store->set(keys::done(m.rv.rank), bytes("1"));
      m.store->add(keys::kDoneCount, 1);
      // The rank hosting the store keeps it up until everyone is done with it.
      if (m.rv.rank == 0 && !m.rv.external_store) {
        const auto deadline = std::chrono::steady_clock::now() + m.options.timeout;
        while (m.store->add(keys::kDoneCount, 0) < m.rv.world_size &&
               std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } catch (const std::exception&) {
      // Shutting down: a store already gone changes nothing.
    }
  }
  m.stop_threads();
  m.groups.clear();
  m.global.reset();
}

int World::rank() const { return impl_->rv.rank; }
int World::size() const { return impl_->rv.world_size; }
int World::local_rank() const { return impl_->rv.local_rank; }
const WorldOptions& World::options() const { return impl_->options; }
std::shared_ptr<Group> World::global() { return impl_->global; }

std::shared_ptr<Group> World::subgroup(const std::vector<int>& ranks) {
  Impl& m = *impl_;
  REALIGN_CHECK(!ranks.empty()) << "subgroup of no ranks";
  std::vector<bool> seen(m.rv.world_size, false);
  int me = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    REALIGN_CHECK(ranks[i] >= 0 && ranks[i] < m.rv.world_size)
        << "subgroup [" << join(ranks) << "]: rank " << ranks[i] << " outside a world of " << m.rv.world_size;
    REALIGN_CHECK(!seen[ranks[i]]) << "subgroup [" << join(ranks) << "]: rank " << ranks[i] << " twice";
    seen[ranks[i]] = true;
    if (ranks[i] == m.rv.rank) me = static_cast<int>(i);
  }
  if (me < 0) return nullptr;
  auto it = m.groups.find(ranks);
  if (it != m.groups.end()) return it->second;
  auto g = ranks.size() == 1 ? single_rank_group() : m.build(ranks, me);
  m.groups.emplace(ranks, g);
  return g;
}

std::optional<AxisGroups> World::axis_groups(const Layout& layout) {
  REALIGN_CHECK(layout.first_device >= 0 && layout.first_device + layout.size() <= size())
      << "layout " << to_string(layout) << " does not fit a world of " << size();
  if (!layout.contains(rank())) return std::nullopt;
  AxisGroups a;
  a.coord = layout.coord_of(rank());
  a.tp = subgroup(axis_ranks(layout, rank(), LayoutAxis::kTensor));
  a.dp = subgroup(axis_ranks(layout, rank(), LayoutAxis::kData));
  a.pp = subgroup(axis_ranks(layout, rank(), LayoutAxis::kPipeline));
  return a;
}

bool World::abort(const std::string& cause) {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> g(m.mu);  // the store monitor reads it
    m.abort_cause = cause;
  }
  m.abort_started_ms = Impl::now_ms();
  m.aborting = true;
  const std::string me = "rank " + std::to_string(m.rv.rank) + " on " + m.label;
  std::string mine = me + " failed: " + cause;
  std::string message;
  bool first = true;
  try {
    // A collective that broke because a peer died names no culprit: if some rank has gone silent, it is
    // the cause (every rank that sees the breakage finds the same silent ranks).
    if (m.store->add(keys::kAbortCount, 0) == 0) {
      const auto window = std::max<std::chrono::milliseconds>(std::chrono::milliseconds(3000),
                                                              10 * m.options.watchdog_interval);
      const std::vector<int> silent = m.silent_ranks(window);
      if (!silent.empty()) {
        std::string names;
        for (size_t i = 0; i < silent.size(); ++i) names += (i ? ", " : "") + m.who(*m.store, silent[i]);
        mine = names + " failed: stopped (no heartbeat for " +
               std::to_string(std::chrono::duration<double>(window).count()).substr(0, 3) +
               " s; its connections broke: " + me + " saw: " + cause + ")";
      }
    }
    // A rank whose collective broke because another rank failed first reports that rank's cause.
    if (m.store->add(keys::kAbortCount, 1) == 1) {
      m.store->set(keys::kAbort, bytes(mine));
      message = mine;
    } else {
      first = false;
      m.store->wait({keys::kAbort}, std::chrono::seconds(2));
      message = me + " exiting: " + str(m.store->get(keys::kAbort)) + " (here: " + cause + ")";
    }
  } catch (const std::exception&) {
    // No store: the launcher or the peers' own timeouts still end the run.
    if (message.empty()) message = mine;
  }
  std::fprintf(stderr, "realign: %s\n", message.c_str());
  std::fflush(stderr);
  return first;
}

void World::leave_after_abort(int code) { impl_->leave("", code); }

std::optional<std::string> World::abort_message() {
  if (!impl_->store->check({keys::kAbort})) return std::nullopt;
  return str(impl_->store->get(keys::kAbort));
}

int run_worker(const std::function<void(World&)>& body) {
  std::unique_ptr<World> world;
  std::string cause;
  try {
    world = World::from_env();
    body(*world);
  } catch (const std::exception& e) {
    cause = describe(e);
  } catch (...) {
    cause = "unknown exception";
  }
  if (!cause.empty()) {
    if (cause.size() > 2000) cause = cause.substr(0, 2000) + "...";
    int code = 1;
    if (world) {
      world->leave_after_abort(world->abort(cause) ? 1 : kPeerAbortExitCode);
    } else {
      std::fprintf(stderr, "realign: rank %s failed: %s\n", getenv_or("RANK", "?").c_str(), cause.c_str());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  world.reset();
  return 0;
}

}  // namespace realign::comm
