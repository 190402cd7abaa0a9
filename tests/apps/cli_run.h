// Runs the realign binary with a shell command line (stderr folded into stdout) for the CLI tests.
#pragma once

#include <string>

namespace realign::testing {

struct CliResult {
  int code = -1;
  std::string out;
};

CliResult run_realign(const std::string& args);

}  // namespace realign::testing
