// Training curves as an SVG: one small panel per metric (step on x), drawn from metrics.jsonl records, with
// 1-2-5 ticks on both axes and the training stages (SFT, reward model, RL, DPO) told apart.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign::train {

struct CurvePanel {
  std::string key;        // the metrics field ("reward/mean")
  std::string title;      // shown above the panel
  bool by_stage = false;  // one panel per stage (the records' "stage"), each on its own scale: a field every
                          // stage records at a different size, such as the seconds per step
};

// Panels whose key no record has are left out; steps come from each record's "step" (its index otherwise).
// Where the stage changes inside a panel's steps, a dashed line marks the new stage's first step.
std::string curves_svg(const std::vector<Json>& records, const std::vector<CurvePanel>& panels,
                       const std::string& title);

}  // namespace realign::train
