#include "data/reward_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/json.h"

extern char** environ;

namespace realign::data {
namespace {

// The input goes through a temporary file so a command that reads slowly (or not at all) cannot deadlock us.
std::string write_input_file(const std::vector<RewardSample>& samples, const std::string& command) {
  char path[] = "/tmp/realign-reward-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) throw Error(command, std::string("cannot create a temporary file: ") + std::strerror(errno));
  std::string text;
  for (const auto& s : samples)
    text += Json{{"prompt", s.prompt}, {"response", s.response}, {"answer", s.answer}}.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(path);
      throw Error(command, "cannot write the reward command's input");
    }
    done += size_t(n);
  }
  ::close(fd);
  return path;
}

}  // namespace

std::vector<double> run_reward_command(const std::string& command, const std::vector<RewardSample>& samples,
                                       double timeout_s) {
  const std::string input = write_input_file(samples, command);
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) throw Error(command, "cannot create a pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, input.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::unlink(input.c_str());
    throw Error(command, std::string("cannot start the reward command: ") + std::strerror(rc));
  }

  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out_pipe[0], POLLIN, 0};
    if (::poll(&p, 1, int(std::min<int64_t>(left.count(), 1000))) <= 0) continue;
    const ssize_t n = ::read(out_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    output.append(buf, size_t(n));
    if (output.size() > (64u << 20)) throw Error(command, "printed more than 64 MiB");
  }
  ::close(out_pipe[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::unlink(input.c_str());
  if (timed_out) throw Error(command, "reward command did not finish within " + std::to_string(int(timeout_s)) + " s");
  if (WIFSIGNALED(status))
    throw Error(command, "reward command was killed by signal " + std::to_string(WTERMSIG(status)));
  if (WEXITSTATUS(status) != 0)
    throw Error(command, "reward command exited with code " + std::to_string(WEXITSTATUS(status)));

  std::vector<double> scores;
  std::istringstream lines(output);
  std::string line;
  int64_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    char* end = nullptr;
    const double v = std::strtod(line.c_str(), &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
    if (end == line.c_str() || (end && *end != '\0') || !std::isfinite(v))
      throw Error(command, "output line " + std::to_string(number) + " is not a number: '" + line.substr(0, 80) + "'");
    scores.push_back(v);
  }
  if (scores.size() != samples.size())
    throw Error(command, "printed " + std::to_string(scores.size()) + " scores for " + std::to_string(samples.size()) +
                             " samples (one number per line expected)");
  return scores;
}

}  // namespace realign::data
