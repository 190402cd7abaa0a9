// `realign report RUN_DIR`: the run's training curves (curves.svg) and its timelines (timeline.svg: the
// measured one, next to the planner's estimate when the run saved it) drawn from the files the run wrote.
#pragma once

#include <string>
#include <vector>

#include "train/curves_svg.h"

namespace realign::train {

// Writes the SVGs into `out_dir` (the run directory when empty); returns the paths written. Throws Error when
// run_dir holds no metrics.jsonl.
std::vector<std::string> write_report(const std::string& run_dir, const std::string& out_dir = "");

// The metrics panels drawn, in order (the keys the trainer writes).
std::vector<CurvePanel> report_panels();

}  // namespace realign::train
