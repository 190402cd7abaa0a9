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
  // Streaming: the iterations' batches a replica decodes at once. Generation runs ahead of training by up to
  // the staleness bound, and a streaming engine submits every batch it may run ahead to its servers at once
  // (NVIDIA-NeMo/RL nemo_rl/algorithms/async_utils/trajectory_collector.py starts one rollout worker per
  // target weight within max_trajectory_age_steps of the current one), so its running batch holds up to this
  // many batches' samples, as far as the KV cache takes them. 1 without partial rollouts.
  int in_flight_batches = 1;
  bool operator==(const GenerationRun& o) const {
    return lengths == o.lengths && batching == o.batching && partial_rollout == o.partial_rollout &&
           in_flight_batches == o.in_flight_batches;
  }
};

}  // namespace realign
