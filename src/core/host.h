// Facts about the machine this process runs on, for the figures benchmarks and calibrations print and record.
#pragma once

#include <string>

namespace realign {

// The CPU's model name from /proc/cpuinfo ("AMD EPYC 7763 64-Core Processor"), or "an unknown CPU".
std::string cpu_model_name();

}  // namespace realign
