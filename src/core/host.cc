#include "core/host.h"

#include <fstream>

namespace realign {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "an unknown CPU";
}

}  // namespace realign
