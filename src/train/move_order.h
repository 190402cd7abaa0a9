// Where a step's data moves run in its one order of calls (graph_step.cc). A move blocks every rank it
// touches until the rank on the other side reaches it (realloc/data_executor.h), and every rank takes part in
// the step's calls and moves in that one order, so a move's place decides who waits for whom.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/layout.h"

namespace realign::train {

// One call of a step, in the step's order: its devices, and the calls before it in the step whose outputs
// it reads (their indices).
struct StepCall {
  Layout devices;
  std::vector<size_t> reads;
};

// The index of the call that the move of call `producer`'s outputs to call `reader` (producer < reader) runs
// just before: right after the producer (`producer + 1`), so the producer's ranks hand their rows over and
// go on; unless a receiving rank has a call to run before the reader that does not wait for the producer
// anyway, and no sending rank has a call left in the step: then just before the reader (`reader`), so the
// receiver does not wait for rows it does not need yet, and the senders, with nothing else to run, wait
// instead. (With train.staleness 1, the next iteration's reference inference on a device of this iteration's
// actor inference held that inference, and so the actor's update, until the next iteration's generation on
// another device was done: 89 ms per iteration against 82 ms with the reference beside the generation.)
size_t move_position(const std::vector<StepCall>& calls, size_t producer, size_t reader);

}  // namespace realign::train
