#include "comm/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "comm/store_keys.h"
#include "core/check.h"
#include "core/error.h"

extern char** environ;

namespace realign::comm {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  int pid = -1;
  bool alive = false;
  int fd[2] = {-1, -1};  // read ends of the child's stdout, stderr
  std::string partial[2];
};

// Environment of one rank: ours minus the variables we set, plus them, plus the caller's extras.
std::vector<std::string> rank_env(const LaunchOptions& o, int rank, int port) {
  std::vector<std::pair<std::string, std::string>> set = {
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(o.nprocs)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nprocs)},
      {"GROUP_RANK", "0"},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", std::to_string(port)},
      {"TORCHELASTIC_USE_AGENT_STORE", "True"},
  };
  for (const auto& kv : o.env) set.push_back(kv);
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& kv : set) overridden |= kv.first == name;
    if (!overridden) out.push_back(entry);
  }
  for (const auto& kv : set) out.push_back(kv.first + "=" + kv.second);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone: nothing better to do than to drop the line
    done += static_cast<size_t>(n);
  }
}

// Parses "rank R on host H failed: ..." (the abort key's form) into R.
std::optional<int> rank_of_abort(const std::string& message) {
  int r = -1;
  if (std::sscanf(message.c_str(), "rank %d", &r) == 1 && r >= 0) return r;
  return std::nullopt;
}

}  // namespace

std::string current_executable() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw Error("/proc/self/exe", std::string("readlink: ") + std::strerror(errno));
  return std::string(buf.data(), static_cast<size_t>(n));
}

std::string describe_exit(const RankExit& e) {
  if (e.signal != 0) {
    const char* abbrev = sigabbrev_np(e.signal);
    return "rank " + std::to_string(e.rank) + " died: signal " + std::to_string(e.signal) + " (SIG" +
           (abbrev ? abbrev : "?") + ")";
  }
  return "rank " + std::to_string(e.rank) + " exited with code " + std::to_string(e.exit_code);
}

std::string LaunchResult::output_text() const {
  std::string out;
  for (size_t r = 0; r < output.size(); ++r) {
    size_t start = 0;
    while (start < output[r].size()) {
      size_t end = output[r].find('\n', start);
      if (end == std::string::npos) end = output[r].size();
      out += "[rank " + std::to_string(r) + "] " + output[r].substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  return out;
}

namespace {

void check_options(const LaunchOptions& o) {
  if (o.argv.empty()) throw Error("launch.argv", "no program to start");
  if (o.nprocs < 1)
    throw Error("launch.nprocs", std::to_string(o.nprocs) + " is not a positive number of ranks");
  if (::access(o.argv[0].c_str(), X_OK) != 0)
    throw Error(o.argv[0], std::string("cannot execute: ") + std::strerror(errno));
}

// The store lives in the launcher so that it outlives any rank; port 0 asks the kernel for a free port.
c10::intrusive_ptr<c10d::TCPStore> start_store() {
  c10d::TCPStoreOptions so;
  so.port = 0;
  so.isServer = true;
  so.waitWorkers = false;
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
}

// The ranks of one launch, from fork+exec to their exits: their output forwarded line by line, their exits
// recorded in `result`, and the others stopped after a failure or the timeout. The launcher calls step()
// until it returns false.
class RankWatch {
 public:
  RankWatch(const LaunchOptions& o, LaunchResult& result)
      : o_(o), result_(result), start_(Clock::now()), children_(o.nprocs), alive_(o.nprocs) {
    result_.ranks.resize(o.nprocs);
    result_.output.resize(o.capture_output ? o.nprocs : 0);
  }

  Clock::time_point start() const { return start_; }
  const std::vector<int>& failures() const { return failures_; }  // in the order they were seen
  bool timed_out() const { return timed_out_; }

  // Starts every rank. Everything a child needs is prepared before fork: between fork and exec it only calls
  // prctl/dup2/execve/_exit.
  void spawn(int port) {
    std::vector<std::string> args = o_.argv;
    std::vector<char*> argv = c_strings(args);
    for (int r = 0; r < o_.nprocs; ++r) {
      std::vector<std::string> env = rank_env(o_, r, port);
      std::vector<char*> envp = c_strings(env);
      int out[2] = {-1, -1}, err[2] = {-1, -1};
      if (piped() && (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0))
        throw Error("launch", std::string("pipe: ") + std::strerror(errno));
      const pid_t pid = ::fork();
      if (pid < 0) throw Error("launch", std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        // If the launcher dies (killed, crashed), its ranks must not live on unwatched.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (piped()) {
          ::dup2(out[1], 1);
          ::dup2(err[1], 2);
        }
        ::execve(argv[0], argv.data(), envp.data());
        const char msg[] = "realign launcher: execve failed\n";
        (void)!::write(2, msg, sizeof msg - 1);
        ::_exit(127);
      }
      Child& c = children_[r];
      c.pid = pid;
      c.alive = true;
      result_.ranks[r].rank = r;
      result_.ranks[r].pid = pid;
      if (piped()) {
        ::close(out[1]);
        ::close(err[1]);
        c.fd[0] = out[0];
        c.fd[1] = err[0];
        ::fcntl(out[0], F_SETFL, O_NONBLOCK);
        ::fcntl(err[0], F_SETFL, O_NONBLOCK);
      }
    }
  }

  // One round (at most ~50 ms): output, exits, stopping the others, draining; false once every rank has
  // exited and every pipe is closed.
  bool step() {
    if (!forward_output()) return false;
    const auto now = Clock::now();
    reap(now);
    stop_others(now);
    drain(now);
    return true;
  }

 private:
  bool piped() const { return o_.forward_output || o_.capture_output; }

  void emit(int r, int stream, const std::string& line) {
    if (o_.capture_output) result_.output[r] += line + "\n";
    if (o_.forward_output) write_all(stream == 0 ? 1 : 2, "[rank " + std::to_string(r) + "] " + line + "\n");
  }

  void close_stream(int r, int s) {
    Child& c = children_[r];
    if (!c.partial[s].empty()) emit(r, s, c.partial[s]);
    c.partial[s].clear();
    ::close(c.fd[s]);
    c.fd[s] = -1;
  }

  // Waits up to 50 ms for output and forwards its complete lines; false when there is nothing left to watch.
  bool forward_output() {
    std::vector<pollfd> pfds;
    std::vector<std::pair<int, int>> who;  // (rank, stream) of each pfds entry
    for (int r = 0; r < o_.nprocs; ++r)
      for (int s = 0; s < 2; ++s)
        if (children_[r].fd[s] >= 0) {
          pfds.push_back({children_[r].fd[s], POLLIN, 0});
          who.emplace_back(r, s);
        }
    if (alive_ == 0 && pfds.empty()) return false;
    if (pfds.empty()) {
      ::usleep(50'000);
      return true;
    }
    const int n = ::poll(pfds.data(), pfds.size(), 50);
    if (n < 0 && errno != EINTR) throw Error("launch", std::string("poll: ") + std::strerror(errno));
    for (size_t i = 0; n > 0 && i < pfds.size(); ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto [r, s] = who[i];
      const ssize_t got = ::read(pfds[i].fd, buf_, sizeof buf_);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) {
        close_stream(r, s);
        continue;
      }
      std::string& p = children_[r].partial[s];
      p.append(buf_, static_cast<size_t>(got));
      size_t nl;
      while ((nl = p.find('\n')) != std::string::npos) {
        emit(r, s, p.substr(0, nl));
        p.erase(0, nl + 1);
      }
    }
    return true;
  }

  // Records the ranks that have exited since the last round.
  void reap(Clock::time_point now) {
    for (int r = 0; r < o_.nprocs; ++r) {
      Child& c = children_[r];
      if (!c.alive) continue;
      int status = 0;
      const pid_t w = ::waitpid(c.pid, &status, WNOHANG);
      if (w != c.pid) continue;
      c.alive = false;
      --alive_;
      RankExit& e = result_.ranks[r];
      e.after = std::chrono::duration_cast<std::chrono::milliseconds>(now - start_);
      if (WIFSIGNALED(status))
        e.signal = WTERMSIG(status);
      else
        e.exit_code = WEXITSTATUS(status);
      if (e.signal != 0 || e.exit_code != 0) failures_.push_back(r);
    }
  }

  // After a failure (kill_on_failure) or the timeout: SIGTERM to every live rank, SIGKILL after the grace.
  void stop_others(Clock::time_point now) {
    if (!terminating_ && o_.timeout.count() > 0 && now - start_ > o_.timeout && alive_ > 0) timed_out_ = true;
    if (!terminating_ && alive_ > 0 && (timed_out_ || (o_.kill_on_failure && !failures_.empty()))) {
      terminating_ = true;
      kill_at_ = now + o_.grace;
      for (int r = 0; r < o_.nprocs; ++r)
        if (children_[r].alive) {
          result_.ranks[r].killed_by_launcher = true;
          ::kill(children_[r].pid, SIGTERM);
        }
    }
    if (terminating_ && now >= kill_at_) {
      for (auto& c : children_)
        if (c.alive) ::kill(c.pid, SIGKILL);
      kill_at_ = now + std::chrono::hours(1);
    }
  }

  // A grandchild may hold a pipe open after its parent rank exited: give the output a moment, then stop.
  void drain(Clock::time_point now) {
    if (alive_ == 0 && !draining_) {
      draining_ = true;
      drain_until_ = now + std::chrono::seconds(1);
    }
    if (draining_ && now >= drain_until_)
      for (int r = 0; r < o_.nprocs; ++r)
        for (int s = 0; s < 2; ++s)
          if (children_[r].fd[s] >= 0) close_stream(r, s);
  }

  const LaunchOptions& o_;
  LaunchResult& result_;
  const Clock::time_point start_;
  std::vector<Child> children_;
  int alive_;
  std::vector<int> failures_;
  bool terminating_ = false, timed_out_ = false, draining_ = false;
  Clock::time_point kill_at_{}, drain_until_{};
  char buf_[65536];
};

// The abort key's message, if some rank wrote one.
std::optional<std::string> abort_message_of(c10d::TCPStore& store) {
  try {
    if (store.check({keys::kAbort})) {
      auto b = store.get(keys::kAbort);
      return std::string(b.begin(), b.end());
    }
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// result.failure and exit_code from the ranks' exits. Cause before effect: a rank killed by a signal (not
// ours), else the rank named in the abort key, else the first failure seen.
void settle_outcome(const LaunchOptions& o, const RankWatch& watch,
                    const std::optional<std::string>& abort_message, LaunchResult& result) {
  std::optional<int> primary;
  for (int r : watch.failures())
    if (!primary && result.ranks[r].signal != 0 && !result.ranks[r].killed_by_launcher) primary = r;
  if (!primary && abort_message)
    if (auto r = rank_of_abort(*abort_message))
      for (int f : watch.failures())
        if (f == *r && !result.ranks[f].killed_by_launcher) primary = f;
  for (int r : watch.failures())
    if (!primary && !result.ranks[r].killed_by_launcher) primary = r;
  if (primary) {
    result.failure = describe_exit(result.ranks[*primary]);
    if (abort_message) result.failure += ": " + *abort_message;
  } else if (watch.timed_out()) {
    result.failure =
        "timed out after " + std::to_string(o.timeout.count() / 1000.0).substr(0, 6) + " s; all ranks killed";
  }
  bool all_ok = true;
  for (const auto& e : result.ranks) all_ok &= e.signal == 0 && e.exit_code == 0;
  result.exit_code = all_ok && !watch.timed_out() ? 0 : 1;
  if (result.exit_code != 0 && result.failure.empty()) result.failure = "ranks were killed";
}

}  // namespace

LaunchResult launch_local(const LaunchOptions& o) {
  check_options(o);
  auto store = start_store();
  LaunchResult result;
  RankWatch watch(o, result);
  watch.spawn(store->getPort());
  while (watch.step()) {
  }
  result.wall = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - watch.start());
  settle_outcome(o, watch, abort_message_of(*store), result);
  return result;
}

}  // namespace realign::comm
