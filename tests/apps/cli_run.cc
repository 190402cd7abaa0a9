#include "cli_run.h"

#include <sys/wait.h>

#include <cstdio>

namespace realign::testing {

CliResult run_realign(const std::string& args) {
  const std::string cmd = std::string(REALIGN_BINARY_DIR) + "/src/apps/realign " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace realign::testing
