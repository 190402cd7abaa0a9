// Two "hosts" on one machine for tests of multi-node runs: two network namespaces joined by a veth pair
// (10.77.0.1 and 10.77.0.2, lo up in each), so ranks on different hosts reach each other only over that link,
// as on two machines. Needs root (CI runs as root): a test that cannot make them fails, it does not skip.
// Each TwoHosts has its own namespace names (pid and a counter), so parallel tests do not collide; inside the
// namespaces, addresses and ports are private to them. The destructor kills what it started and removes both
// namespaces.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace realign::testing {

class TwoHosts {
 public:
  TwoHosts();
  ~TwoHosts();
  TwoHosts(const TwoHosts&) = delete;
  TwoHosts& operator=(const TwoHosts&) = delete;

  // Empty when both hosts are up, else what failed (the test asserts on it).
  const std::string& error() const { return error_; }
  static std::string address(int host) { return host == 0 ? "10.77.0.1" : "10.77.0.2"; }
  const std::string& interface(int host) const { return veth_[host]; }

  // Starts `argv` on `host` with `env` added to ours, stdout and stderr to `log`. Returns its pid.
  int start(int host, const std::map<std::string, std::string>& env, const std::vector<std::string>& argv,
            const std::string& log);
  // Takes `host`'s end of the link down: the hosts can no longer reach each other (a network failure).
  bool cut(int host);
  // Waits for `pid` at most `timeout`; returns its wait status, or -1 (after SIGKILL) when it outlived it.
  int wait(int pid, std::chrono::milliseconds timeout);

 private:
  std::string ns_[2], veth_[2], error_;
  std::vector<int> started_;
};

// torchrun's variables for global rank `rank` of a job of `hosts` x `per_host` ranks, host 0 the master.
std::map<std::string, std::string> torchrun_env(const TwoHosts& h, int rank, int per_host, int hosts);

}  // namespace realign::testing
