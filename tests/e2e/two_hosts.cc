#include "two_hosts.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>

namespace realign::testing {
namespace {

// Runs a command through the shell; its output is kept for the error message.
bool sh(const std::string& cmd, std::string* error) {
  const std::string full = cmd + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (error->empty()) *error = "'" + cmd + "' failed (root and iproute2 are needed): " + out;
  return false;
}

}  // namespace

TwoHosts::TwoHosts() {
  static std::atomic<int> counter{0};
  const std::string id = std::to_string(::getpid()) + "x" + std::to_string(counter++);
  for (int h : {0, 1}) {
    ns_[h] = "realign" + id + (h ? "b" : "a");
    veth_[h] = std::string("rv") + (h ? "b" : "a");  // inside a namespace: no name clash with other tests
  }
  sh("ip netns add " + ns_[0], &error_) && sh("ip netns add " + ns_[1], &error_) &&
      sh("ip link add " + veth_[0] + " netns " + ns_[0] + " type veth peer name " + veth_[1] + " netns " +
             ns_[1],
         &error_);
  for (int h : {0, 1})
    if (error_.empty()) {
      const std::string in = "ip -n " + ns_[h] + " ";
      sh(in + "addr add " + address(h) + "/24 dev " + veth_[h], &error_) &&
          sh(in + "link set " + veth_[h] + " up", &error_) && sh(in + "link set lo up", &error_);
    }
}

TwoHosts::~TwoHosts() {
  for (int pid : started_)
    if (::kill(pid, 0) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  std::string ignored;
  for (int h : {0, 1}) sh("ip netns del " + ns_[h], &ignored);  // the veth pair goes with its namespaces
}

int TwoHosts::start(int host, const std::map<std::string, std::string>& env,
                    const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> args = {"ip", "netns", "exec", ns_[host], "env"};
  for (const auto& [k, v] : env) args.push_back(k + "=" + v);
  args.insert(args.end(), argv.begin(), argv.end());
  std::vector<char*> c;
  for (auto& a : args) c.push_back(a.data());
  c.push_back(nullptr);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // `ip netns exec` and `env` exec in place: this pid ends up being the program itself.
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execvp("ip", c.data());
    ::_exit(127);
  }
  ::close(fd);
  started_.push_back(pid);
  return pid;
}

bool TwoHosts::cut(int host) {
  std::string error;
  return sh("ip -n " + ns_[host] + " link set " + veth_[host] + " down", &error);
}

int TwoHosts::wait(int pid, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::map<std::string, std::string> torchrun_env(const TwoHosts& h, int rank, int per_host, int hosts) {
  return {{"RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(per_host * hosts)},
          {"LOCAL_RANK", std::to_string(rank % per_host)},
          {"LOCAL_WORLD_SIZE", std::to_string(per_host)},
          {"MASTER_ADDR", TwoHosts::address(0)},
          {"MASTER_PORT", "29500"},
          {"GLOO_SOCKET_IFNAME", h.interface(rank / per_host)}};
}

}  // namespace realign::testing
