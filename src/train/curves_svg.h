// Training curves as an SVG: one small panel per metric (step on x), drawn from metrics.jsonl records.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign::runtime {

struct CurvePanel {
  std::string key;    // the metrics field ("reward/mean")
  std::string title;  // shown above the panel
};

// Panels whose key no record has are left out; steps come from each record's "step" (its index otherwise).
std::string curves_svg(const std::vector<Json>& records, const std::vector<CurvePanel>& panels,
                       const std::string& title);

}  // namespace realign::runtime
