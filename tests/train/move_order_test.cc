#include "train/move_order.h"

#include <gtest/gtest.h>

namespace realign::train {
namespace {

StepCall on(int first, int n, std::vector<size_t> reads = {}) {
  Layout l;
  l.first_device = first;
  l.dp = n;
  return StepCall{l, std::move(reads)};
}

// A step of PPO at train.staleness 1 on 4 devices, in graph_step's order: the next iteration's generation
// first, this iteration's calls (their inputs came at the step's start), then the next iteration's reference
// inference.
TEST(MoveOrder, AMoveWaitsForAReaderWhoseRanksHaveOtherCallsFirstWhileTheSendersHaveNone) {
  const std::vector<StepCall> step = {on(2, 1),          // 0 actor_gen (next iteration)
                                      on(0, 2),          // 1 actor_inf
                                      on(3, 1),          // 2 critic_inf
                                      on(0, 1, {1, 2}),  // 3 actor_train
                                      on(3, 1, {1, 2}),  // 4 critic_train
                                      on(1, 1, {0})};    // 5 ref_inf (next iteration)
  EXPECT_EQ(move_position(step, 0, 5), 5u);  // device 1 runs actor_inf first; device 2 has nothing left
  EXPECT_EQ(move_position(step, 1, 3), 2u);  // actor_inf's outputs leave at once: device 0 runs actor_train
  EXPECT_EQ(move_position(step, 2, 4), 3u);  // critic_inf's stay on device 3
}

// A synchronous step with the generation on a device of its own (the disaggregated preset): the calls
// between the generation and a reader on the training devices read the generation too, so they wait for it
// anyway, and its rows leave at once.
TEST(MoveOrder, AMoveLeavesAtOnceWhenTheReadersRanksWaitForTheProducerAnyway) {
  const std::vector<StepCall> step = {on(3, 1),                 // 0 actor_gen
                                      on(0, 3, {0}),            // 1 ref_inf
                                      on(0, 3, {0}),            // 2 actor_inf
                                      on(0, 3, {0}),            // 3 critic_inf
                                      on(0, 3, {0, 1, 2, 3})};  // 4 actor_train
  for (size_t reader = 1; reader < step.size(); ++reader) EXPECT_EQ(move_position(step, 0, reader), 1u);
}

TEST(MoveOrder, AMoveLeavesAtOnceWhenTheSendersHaveCallsLeft) {
  // critic_inf's outputs on device 1 go to actor_train on device 0, which runs actor_inf first; device 1 runs
  // critic_train after: waiting for the reader there would hold it, so device 0 waits instead.
  const std::vector<StepCall> step = {on(0, 1),              // 0 actor_gen
                                      on(1, 1, {0}),         // 1 critic_inf
                                      on(0, 1, {0}),         // 2 actor_inf
                                      on(0, 1, {0, 1, 2}),   // 3 actor_train
                                      on(1, 1, {0, 1, 2})};  // 4 critic_train
  EXPECT_EQ(move_position(step, 1, 3), 2u);
  // Without critic_train on device 1, the move waits for actor_train.
  EXPECT_EQ(move_position({step.begin(), step.end() - 1}, 1, 3), 3u);
  // The reader's ranks have nothing to run before it: the move goes right away.
  EXPECT_EQ(move_position(step, 0, 1), 1u);
}

}  // namespace
}  // namespace realign::train
