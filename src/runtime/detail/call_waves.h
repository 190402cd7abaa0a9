// The order in which calls that run together (CallPlacement::run_calls) move parameters and run: waves.
// Within a wave every parameter move comes first, then the bodies, so calls on disjoint devices overlap (no
// rank waits for a move whose source rank is busy with another call). A call whose reallocated copy would
// land on a rank that already holds another copy of the wave starts a new wave: a rank holds one
// reallocated copy at a time, as the simulator's memory model assumes.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/layout.h"

namespace realign::runtime {

struct CallWaveInput {
  Layout home;    // where the model's parameters live between calls
  Layout layout;  // where the call runs (a copy is reallocated there when it differs from home)
};

// Indices of `calls` per wave, in order; every index once, each wave in increasing order.
std::vector<std::vector<size_t>> call_waves(const std::vector<CallWaveInput>& calls);

}  // namespace realign::runtime
