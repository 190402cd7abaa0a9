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

LaunchResult launch_local(const LaunchOptions& o) {
  if (o.argv.empty()) throw Error("launch.argv", "no program to start");
  if (o.nprocs < 1)
    throw Error("launch.nprocs", std::to_string(o.nprocs) + " is not a positive number of ranks");
  if (::access(o.argv[0].c_str(), X_OK) != 0)
    throw Error(o.argv[0], std::string("cannot execute: ") + std::strerror(errno));

  // The store lives here so that it outlives any rank; port 0 asks the kernel for a free port.
  c10d::TCPStoreOptions so;
  so.port = 0;
  so.isServer = true;
  so.waitWorkers = false;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  const int port = store->getPort();

  const bool piped = o.forward_output || o.capture_output;
  const auto start = Clock::now();
  LaunchResult result;
  result.ranks.resize(o.nprocs);
  result.output.resize(o.capture_output ? o.nprocs : 0);
  std::vector<Child> children(o.nprocs);

  // Everything the child needs is prepared before fork: between fork and exec it only calls
  // dup2/execve/_exit.
  std::vector<std::string> args = o.argv;
  std::vector<char*> argv = c_strings(args);
  for (int r = 0; r < o.nprocs; ++r) {
    std::vector<std::string> env = rank_env(o, r, port);
    std::vector<char*> envp = c_strings(env);
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (piped && (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0))
      throw Error("launch", std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw Error("launch", std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      // If the launcher dies (killed, crashed), its ranks must not live on unwatched.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (piped) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
      }
      ::execve(argv[0], argv.data(), envp.data());
      const char msg[] = "realign launcher: execve failed\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(127);
    }
    Child& c = children[r];
    c.pid = pid;
    c.alive = true;
    result.ranks[r].rank = r;
    result.ranks[r].pid = pid;
    if (piped) {
      ::close(out[1]);
      ::close(err[1]);
      c.fd[0] = out[0];
      c.fd[1] = err[0];
      ::fcntl(out[0], F_SETFL, O_NONBLOCK);
      ::fcntl(err[0], F_SETFL, O_NONBLOCK);
    }
  }

  auto emit = [&](int r, int stream, const std::string& line) {
    if (o.capture_output) result.output[r] += line + "\n";
    if (o.forward_output) write_all(stream == 0 ? 1 : 2, "[rank " + std::to_string(r) + "] " + line + "\n");
  };
  auto close_stream = [&](int r, int s) {
    Child& c = children[r];
    if (!c.partial[s].empty()) emit(r, s, c.partial[s]);
    c.partial[s].clear();
    ::close(c.fd[s]);
    c.fd[s] = -1;
  };

  int alive = o.nprocs;
  std::vector<int> failures;  // ranks in the order their failure was seen
  bool terminating = false, timed_out = false;
  Clock::time_point kill_at{}, drain_until{};
  bool draining = false;
  char buf[65536];
  for (;;) {
    std::vector<pollfd> pfds;
    std::vector<std::pair<int, int>> who;
    for (int r = 0; r < o.nprocs; ++r)
      for (int s = 0; s < 2; ++s)
        if (children[r].fd[s] >= 0) {
          pfds.push_back({children[r].fd[s], POLLIN, 0});
          who.emplace_back(r, s);
        }
    if (alive == 0 && pfds.empty()) break;
    if (!pfds.empty()) {
      const int n = ::poll(pfds.data(), pfds.size(), 50);
      if (n < 0 && errno != EINTR) throw Error("launch", std::string("poll: ") + std::strerror(errno));
      for (size_t i = 0; n > 0 && i < pfds.size(); ++i) {
        if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        auto [r, s] = who[i];
        const ssize_t got = ::read(pfds[i].fd, buf, sizeof buf);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (got <= 0) {
          close_stream(r, s);
          continue;
        }
        std::string& p = children[r].partial[s];
        p.append(buf, static_cast<size_t>(got));
        size_t nl;
        while ((nl = p.find('\n')) != std::string::npos) {
          emit(r, s, p.substr(0, nl));
          p.erase(0, nl + 1);
        }
      }
    } else {
      ::usleep(50'000);
    }

    const auto now = Clock::now();
    for (int r = 0; r < o.nprocs; ++r) {
      Child& c = children[r];
      if (!c.alive) continue;
      int status = 0;
      const pid_t w = ::waitpid(c.pid, &status, WNOHANG);
      if (w != c.pid) continue;
      c.alive = false;
      --alive;
      RankExit& e = result.ranks[r];
      e.after = std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
      if (WIFSIGNALED(status))
        e.signal = WTERMSIG(status);
      else
        e.exit_code = WEXITSTATUS(status);
      if (e.signal != 0 || e.exit_code != 0) failures.push_back(r);
    }
    if (!terminating && o.timeout.count() > 0 && now - start > o.timeout && alive > 0) timed_out = true;
    if (!terminating && alive > 0 && (timed_out || (o.kill_on_failure && !failures.empty()))) {
      terminating = true;
      kill_at = now + o.grace;
      for (int r = 0; r < o.nprocs; ++r)
        if (children[r].alive) {
          result.ranks[r].killed_by_launcher = true;
          ::kill(children[r].pid, SIGTERM);
        }
    }
    if (terminating && now >= kill_at) {
      for (auto& c : children)
        if (c.alive) ::kill(c.pid, SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
    // A grandchild may hold a pipe open after its parent rank exited: give the output a moment, then stop.
    if (alive == 0 && !draining) {
      draining = true;
      drain_until = now + std::chrono::seconds(1);
    }
    if (draining && now >= drain_until)
      for (int r = 0; r < o.nprocs; ++r)
        for (int s = 0; s < 2; ++s)
          if (children[r].fd[s] >= 0) close_stream(r, s);
  }
  result.wall = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);

  // Cause before effect: a rank killed by a signal (not ours), else the rank named in the abort key, else the
  // first failure seen.
  std::optional<std::string> abort_message;
  try {
    if (store->check({keys::kAbort})) {
      auto b = store->get(keys::kAbort);
      abort_message = std::string(b.begin(), b.end());
    }
  } catch (const std::exception&) {
  }
  std::optional<int> primary;
  for (int r : failures)
    if (!primary && result.ranks[r].signal != 0 && !result.ranks[r].killed_by_launcher) primary = r;
  if (!primary && abort_message)
    if (auto r = rank_of_abort(*abort_message))
      for (int f : failures)
        if (f == *r && !result.ranks[f].killed_by_launcher) primary = f;
  for (int r : failures)
    if (!primary && !result.ranks[r].killed_by_launcher) primary = r;
  if (primary) {
    result.failure = describe_exit(result.ranks[*primary]);
    if (abort_message) result.failure += ": " + *abort_message;
  } else if (timed_out) {
    result.failure =
        "timed out after " + std::to_string(o.timeout.count() / 1000.0).substr(0, 6) + " s; all ranks killed";
  }
  bool all_ok = true;
  for (const auto& e : result.ranks) all_ok &= e.signal == 0 && e.exit_code == 0;
  result.exit_code = all_ok && !timed_out ? 0 : 1;
  if (result.exit_code != 0 && result.failure.empty()) result.failure = "ranks were killed";
  return result;
}

}  // namespace realign::comm
