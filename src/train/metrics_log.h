// metrics.jsonl: one JSON object per training step ({"step": N, "reward/mean": ..., ...}), appended and
// flushed as the run goes; read back by `realign report` and trimmed to a checkpoint's step on resume.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign::train {

// Every line of the file (an absent file gives none). Errors name file:line.
std::vector<Json> read_metrics(const std::string& path);

// Drops the lines whose "step" is greater than `step` (atomic rewrite), so a resumed run appends after the
// checkpoint exactly as the uninterrupted run did. An absent file is left absent.
void truncate_metrics_after(const std::string& path, int64_t step);

}  // namespace realign::train
