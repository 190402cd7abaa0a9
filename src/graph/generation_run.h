// How a generation call runs its samples, which decides what the long tail of response lengths costs: the
// lengths themselves, how the generator batches them, and whether it interrupts unfinished samples.
#pragma once

#include <string>

#include "graph/length_distribution.h"

namespace realign {

enum class Batching {
  // realign's runtime (model/generate.cc): a batch decodes until its longest sample ends, finished rows
  // stepping along padded; micro-batches (waves) one after another.
  kStatic,
  // A serving engine (vLLM, SGLang): finished samples leave the batch and queued ones take their place, so
  // the batch shrinks only once the queue is empty.
  kContinuous,
};

std::string to_string(Batching b);

struct GenerationRun {
  LengthDistribution lengths;
  Batching batching = Batching::kStatic;
  // Streaming generation with partial rollouts (AReaL, veRL fully_async's partial_rollout, NeMo-RL's async
  // GRPO): the servers keep their batch full across weight updates, interrupting and resuming unfinished
  // samples, so no step waits for the batch's longest sample. Only with staleness > 0.
  bool partial_rollout = false;
  bool operator==(const GenerationRun& o) const {
    return lengths == o.lengths && batching == o.batching && partial_rollout == o.partial_rollout;
  }
};

}  // namespace realign
