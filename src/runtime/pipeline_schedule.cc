#include "runtime/detail/pipeline_schedule.h"

#include <algorithm>

#include "core/check.h"

namespace realign::runtime {

std::vector<PipelineStep> one_f_one_b_schedule(int stage, int n_stages, int n_micro) {
  REALIGN_CHECK(n_stages >= 1 && stage >= 0 && stage < n_stages && n_micro >= 0)
      << "stage " << stage << " of " << n_stages << ", " << n_micro << " micro-batches";
  const int warmup = std::min(n_stages - stage - 1, n_micro);
  std::vector<PipelineStep> steps;
  int f = 0, b = 0;
  for (int i = 0; i < warmup; ++i) steps.push_back({PipelineStep::Kind::kForward, f++});
  for (int i = 0; i < n_micro - warmup; ++i) {
    steps.push_back({PipelineStep::Kind::kForward, f++});
    steps.push_back({PipelineStep::Kind::kBackward, b++});
  }
  for (int i = 0; i < warmup; ++i) steps.push_back({PipelineStep::Kind::kBackward, b++});
  return steps;
}

int peak_in_flight(const std::vector<PipelineStep>& steps) {
  int now = 0, peak = 0;
  for (const PipelineStep& s : steps) {
    now += s.kind == PipelineStep::Kind::kForward ? 1 : -1;
    peak = std::max(peak, now);
  }
  return peak;
}

}  // namespace realign::runtime
