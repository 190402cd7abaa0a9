// explain: every coefficient and modelling constant a simulation uses, with its value and source, for
// `realign simulate --explain`.
#pragma once

#include <string>
#include <vector>

#include "cost/hardware_profile.h"

namespace realign {

struct ExplainLine {
  std::string name;
  double value = 0;
  std::string unit;
  std::string source;
};

std::vector<ExplainLine> explain(const HardwareProfile& profile);
// One line per entry: "gemm_efficiency = 0.6 (fraction of peak_flops) -- default: ...".
std::string format_explain(const std::vector<ExplainLine>& lines);

}  // namespace realign
