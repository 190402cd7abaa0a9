// A run directory: everything one `realign train` writes (config.yaml as merged, plan.json, metrics.jsonl,
// timeline.json, progress, checkpoints/step-N/ with a "latest" pointer, report SVGs).
#pragma once

#include <string>

namespace realign::train {

struct RunDir {
  std::string root;

  std::string config_file() const { return root + "/config.yaml"; }  // JSON text (a YAML subset)
  std::string plan_file() const { return root + "/plan.json"; }
  std::string metrics_file() const { return root + "/metrics.jsonl"; }
  std::string timeline_file() const { return root + "/timeline.json"; }
  std::string progress_file() const { return root + "/progress"; }  // "step/total" of the last finished step
  std::string checkpoints() const { return root + "/checkpoints"; }
};

// Creates root and checkpoints/ (parents too). Throws Error naming the path when it cannot.
RunDir create_run_dir(const std::string& root);
// An existing run directory to resume: it must hold config.yaml. Throws Error otherwise.
RunDir open_run_dir(const std::string& root);

// A fresh directory name under `parent`: runs/<stem>-YYYYMMDD-HHMMSS (suffixed -2, -3 when taken).
std::string default_run_dir(const std::string& parent, const std::string& stem);

}  // namespace realign::train
