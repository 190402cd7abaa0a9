// The simulator with a staleness share below 1 (veRL fully_async's fractional staleness_threshold): the
// generation may produce that share of its batch with the older weights while it waits for the newer ones,
// the rest after the weight sync. Hand-computable steady states between whole staleness N - 1 and N.
#include <gtest/gtest.h>

#include "cost/fixtures.h"
#include "cost/simulator.h"
#include "graph/call_schedule.h"

namespace realign {
namespace {

using testing::assign;
using testing::free_transfers;
using testing::make_cluster;

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
  const DataflowGraph g = streaming_grpo(staleness, share);
  const Cluster cluster = make_cluster(2, 8);
  Simulator sim(g, cluster, free_transfers(cluster));
  for (int i = 0; i < int(g.mfcs.size()); ++i)
    sim.set_call_time(i, g.mfcs[size_t(i)].name == "actor_gen"     ? gen_s
                         : g.mfcs[size_t(i)].name == "actor_train" ? train_s
                                                                   : 0.0);
  ExecutionPlan p;
  p.assignments = {assign("actor_gen", 0, 2, 4, 1), assign("ref_inf", 0, 2, 4, 1),
                   assign("reward_inf", 0, 2, 4, 1), assign("actor_inf", 8, 2, 4, 1),
                   assign("actor_train", 8, 2, 4, 1)};
  return sim.run(p).iteration_time_s;
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
