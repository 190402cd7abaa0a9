// World's watchdog and abort: every rank's heartbeat in the store, rank 0 watching them, the abort key that
// names the first failure, and leaving the process after one (world.h has the rules).
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "comm/detail/world_impl.h"
#include "comm/store_keys.h"

namespace realign::comm {
namespace {

using detail::bytes;
using detail::describe;
using detail::str;

// Prints and leaves at once: called from the watchdog while the main thread may be blocked in a collective.
[[noreturn]] void exit_now(const std::string& message, int code) {
  std::fprintf(stderr, "realign: %s\n", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

}  // namespace

std::string detail::describe(const std::exception& e) {
  if (auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

std::string World::Impl::who(c10d::Store& s, int r) {
  std::string out = "rank " + std::to_string(r);
  try {
    if (s.check({keys::host(r)})) out += " on " + str(s.get(keys::host(r)));
  } catch (const std::exception&) {
  }
  return out;
}

std::vector<int> World::Impl::silent_ranks(std::chrono::milliseconds window) {
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

void World::Impl::leave(const std::string& message, int code, bool reach_store) {
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

void World::Impl::stop_threads() {
  {
    std::lock_guard<std::mutex> g(mu);
    stop = true;
  }
  cv.notify_all();
  if (watchdog.joinable()) watchdog.join();
  if (store_monitor.joinable()) store_monitor.join();
}

void World::Impl::store_monitor_loop() {
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

void World::Impl::publish_abort(c10d::Store& s, const std::string& message) {
  if (s.add(keys::kAbortCount, 1) == 1) s.set(keys::kAbort, bytes(message));
}

void World::Impl::watchdog_loop() {
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
                     std::to_string(rv.master_port) + " (" + (rv.external_store ? "the launcher" : "rank 0") +
                     ", its host, died or is unreachable): " + describe(e).substr(0, 300),
                 kPeerAbortExitCode);
    }
    lock.lock();
  }
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

}  // namespace realign::comm
