// Rewards from an external program: realign writes one JSON line per sample ({"prompt", "response",
// "answer"}) to its standard input and reads one number per line from its standard output.
#pragma once

#include <string>
#include <vector>

namespace realign::data {

struct RewardSample {
  std::string prompt;
  std::string response;
  std::string answer;
};

// Runs `command` through /bin/sh. Errors (realign::Error naming the command): it cannot start, exits non-zero
// or by a signal, prints a line that is not a finite number, or prints a different number of lines than samples.
// Gives up after `timeout_s` seconds.
std::vector<double> run_reward_command(const std::string& command, const std::vector<RewardSample>& samples,
                                       double timeout_s = 300);

}  // namespace realign::data
