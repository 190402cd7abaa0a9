// Where a planned step's time goes, by phase: generation (and its tail: the decoding after 90% of the
// slowest replica's samples ended) and the updates; and why a staleness wins or loses against synchronous
// training, in words, from those figures.
#pragma once

#include <string>

#include "cost/simulator.h"

namespace realign::apps {

struct StepPhases {
  double iteration_s = 0;
  double generation_s = 0;       // the generation calls' span
  double generation_tail_s = 0;  // of which the tail
  double train_s = 0;            // the train calls' span
  // The cluster's devices' idle share during each span: outside any call, reallocation or data move (in a
  // synchronous step with generation apart, the training devices wait through generation, and the reverse).
  double generation_idle_share = 0;
  double train_idle_share = 0;
};

StepPhases step_phases(Simulator& simulator, const ExecutionPlan& plan, const SimulationResult& result);

// "generation 41.2 s, of which the tail (the last 10% of samples) 43%".
std::string describe_generation(const StepPhases& p);

// Why staleness `n` (its phases `p`) is as fast as it is against the synchronous step `sync` (its phases);
// `partial_rollout`: the generation interrupts its tail. Empty for the synchronous entry itself.
std::string staleness_reason(int64_t n, const StepPhases& p, const StepPhases& sync, bool partial_rollout);

}  // namespace realign::apps
