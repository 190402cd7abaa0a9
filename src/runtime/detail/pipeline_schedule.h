// The 1F1B (PipeDream-flush) schedule as data: the order of forward and backward steps one pipeline stage
// runs over M micro-batches. Torch-free, so the schedule's properties (each micro-batch once, peak in-flight
// activations, no deadlock, bubble size) are tested on their own and a cost model can read it.
#pragma once

#include <vector>

namespace realign::runtime {

struct PipelineStep {
  enum class Kind { kForward, kBackward };
  Kind kind = Kind::kForward;
  int micro = 0;
  bool operator==(const PipelineStep& o) const { return kind == o.kind && micro == o.micro; }
};

// Stage `stage` of `n_stages`: min(n_stages - stage - 1, n_micro) warm-up forwards, then one forward and one
// backward alternately, then the remaining backwards. Micro-batches go forward and backward in order 0..M-1.
std::vector<PipelineStep> one_f_one_b_schedule(int stage, int n_stages, int n_micro);

// The most micro-batches whose forward has run and whose backward has not, at any point of `steps`.
int peak_in_flight(const std::vector<PipelineStep>& steps);

}  // namespace realign::runtime
