// The simulator with a staleness share below 1 (veRL fully_async's fractional staleness_threshold): the
// generation may produce that share of its batch with the older weights while it waits for the newer ones,
// the rest after the weight sync. Hand-computable steady states between whole staleness N - 1 and N.
#include <gtest/gtest.h>

#include "cost/fixtures.h"
#include "cost/simulator.h"
#include "graph/call_schedule.h"

namespace realign {
namespace {

DataflowGraph streaming_grpo(int64_t staleness, double share) {
  AlgorithmConfig c;
  c.algorithm = Algorithm::kGrpo;
  for (const auto& role : algorithm_roles(c.algorithm)) c.models[role] = builtin_model("llama2-7b");
  c.batch.prompts = 64;
  c.batch.prompt_len = 128;
  c.batch.gen_len = 128;
  c.batch.samples_per_prompt = 4;
  c.staleness = staleness;
  c.batching = Batching::kContinuous;
  c.partial_rollout = true;
  c.staleness_share = share;
  return build_graph(c);
}

// Generation on node 0 takes `gen_s`, training on node 1 `train_s`, every other call and move nothing.
double iteration_s(int64_t staleness, double share, double gen_s, double train_s) {
  return testing::run_hand_timed(streaming_grpo(staleness, share), gen_s, train_s).iteration_time_s;
}

TEST(FractionalStaleness, TheShareGeneratedAheadLeavesTheRestOnTheTrainingsPath) {
  // Whole iterations: staleness 1 overlaps all of generation with training.
  EXPECT_NEAR(iteration_s(1, 1.0, 2, 2), 2.0, 1e-9);
  // Share f of staleness 1: the update waits for the rest of the batch, (1 - f) x 2 s, then trains 2 s.
  EXPECT_NEAR(iteration_s(1, 0.5, 2, 2), 3.0, 1e-9);
  EXPECT_NEAR(iteration_s(1, 0.25, 2, 2), 3.5, 1e-9);
  // The share is bounded by the time the devices wait: generation-bound, they never wait long enough
  // (4 s of generation a step, 1 s of training: 1 s ahead, 3 s after the sync; the step is 4 s either way).
  EXPECT_NEAR(iteration_s(1, 0.5, 4, 1), 4.0, 1e-9);
  // Above one iteration: staleness 2 with share 0.5 lies between staleness 1 and 2, here both 2 s.
  EXPECT_NEAR(iteration_s(2, 0.5, 2, 2), 2.0, 1e-9);
}

TEST(FractionalStaleness, TheScheduleFollowsTheNewerWeights) {
  EXPECT_EQ(scheduled_staleness(streaming_grpo(1, 1.0)), 1);
  EXPECT_EQ(scheduled_staleness(streaming_grpo(1, 0.5)), 0);
  EXPECT_EQ(scheduled_staleness(streaming_grpo(3, 0.1)), 2);
}

}  // namespace
}  // namespace realign
