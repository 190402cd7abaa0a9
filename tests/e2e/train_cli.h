// Helpers for tests that drive the `realign` binary's `train` command (4 local worker processes): run it and
// read the metrics it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "core/json.h"
#include "testing/temp_dir.h"

namespace realign::testing {

// The flags after the config of a short run on 4 local workers (16 prompts, 3 SFT and 3 RL steps, one thread
// per worker, no checkpoints), ending with --out: append the run directory.
inline const std::string kShortRun =
    " cluster.devices_per_node=4 batch.prompts=16 train.steps=3 train.sft_stage.steps=3"
    " train.eval_prompts=8 train.threads=1 train.checkpoint_every=0 --no-progress --out ";

// `realign ARGS`, its stdout and stderr in *output; returns the exit status.
inline int run_realign(const std::string& args, std::string* output) {
  const std::string cmd = std::string(REALIGN_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[4096];
  output->clear();
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output->append(buffer, n);
  return WEXITSTATUS(pclose(pipe));
}

// step -> its metrics.jsonl record.
inline std::map<int64_t, Json> read_metrics(const std::string& run_dir) {
  std::map<int64_t, Json> out;
  std::istringstream lines(testing::read_file(run_dir + "/metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line);
    out[j["step"].get<int64_t>()] = j;
  }
  return out;
}

// Expects every `keys` statistic that run `a` recorded to equal run `b`'s at the same step within
// `relative` (1e-4: fp32 round-off of a different layout). Returns how many values it compared.
inline int expect_same_curve(const std::map<int64_t, Json>& a, const std::map<int64_t, Json>& b,
                             std::initializer_list<const char*> keys, double relative = 1e-4) {
  int compared = 0;
  for (const auto& [step, rec] : a)
    for (const char* key : keys)
      if (rec.contains(key)) {
        if (!b.count(step) || !b.at(step).contains(key)) {
          ADD_FAILURE() << "step " << step << " " << key << " missing from the second run";
          continue;
        }
        const double x = rec[key].get<double>(), y = b.at(step)[key].get<double>();
        EXPECT_NEAR(x, y, relative * std::max(1.0, std::abs(x))) << "step " << step << " " << key;
        ++compared;
      }
  return compared;
}

}  // namespace realign::testing
