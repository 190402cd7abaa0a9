// explain: every coefficient and modelling constant a simulation uses, with its value and source, for
// `realign simulate --explain`.
#pragma once

#include <string>
#include <vector>

#include "cost/hardware_profile.h"

namespace realign {

struct ExplainLine {
  ExplainLine(std::string n, double v, std::string u, std::string s, std::string c = "")
      : name(std::move(n)), value(v), unit(std::move(u)), source(std::move(s)), curve(std::move(c)) {}
  std::string name;
  double value = 0;
  std::string unit;
  std::string source;
  std::string curve;  // for a curve: "over gemm_rows: 1 -> 0.01, 64 -> 0.3, ..." (the points as measured)
};

std::vector<ExplainLine> explain(const HardwareProfile& profile);
// One line per entry: "gemm_efficiency = 0.6 (fraction of peak_flops) -- default: ..."; a curve adds its
// points on the next line.
std::string format_explain(const std::vector<ExplainLine>& lines);

}  // namespace realign
