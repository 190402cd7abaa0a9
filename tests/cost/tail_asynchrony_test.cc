// Asynchrony priced with generation's tail (issue 43): on a split plan (generation on one node, training on
// the other), what staleness and partial rollouts buy, with generation priced from its response lengths.
#include <gtest/gtest.h>

#include "cost/fixtures.h"
#include "cost/simulator.h"

namespace realign {
namespace {

using testing::assign;
using testing::free_transfers;
using testing::make_cluster;

// GRPO of llama2-7b, 64 prompts x 4, responses of mean 256 under a 2,048 cap (lognormal), on GPUs.
DataflowGraph tail_graph(int64_t staleness, bool partial_rollout) {
  AlgorithmConfig c;
  c.algorithm = Algorithm::kGrpo;
  for (const auto& role : algorithm_roles(c.algorithm)) c.models[role] = builtin_model("llama2-7b");
  c.batch.prompts = 64;
  c.batch.prompt_len = 128;
  c.batch.gen_len = 256;
  c.batch.gen_len_max = 2048;
  c.batch.gen_lengths = lognormal_lengths(256, 2048, 1.0, "test");
  c.batch.samples_per_prompt = 4;
  c.staleness = staleness;
  c.batching = Batching::kContinuous;
  c.partial_rollout = partial_rollout;
  return build_graph(c);
}

ExecutionPlan split_plan() {
  ExecutionPlan p;
  p.assignments = {assign("actor_gen", 0, 8, 1, 1), assign("ref_inf", 0, 2, 4, 1),
                   assign("reward_inf", 0, 2, 4, 1), assign("actor_inf", 8, 2, 4, 1),
                   assign("actor_train", 8, 2, 4, 1)};
  return p;
}

struct Outcome {
  double iteration_s = 0, generation_s = 0;
};

// Generation as its lengths price it; training `train_s`; every other call nothing.
Outcome run(int64_t staleness, bool partial, double train_s) {
  const DataflowGraph g = tail_graph(staleness, partial);
  const Cluster cluster = make_cluster(2, 8);
  Simulator sim(g, cluster, free_transfers(cluster));
  for (int i = 0; i < int(g.mfcs.size()); ++i) {
    const std::string& name = g.mfcs[size_t(i)].name;
    if (name != "actor_gen") sim.set_call_time(i, name == "actor_train" ? train_s : 0.0);
  }
  const ExecutionPlan plan = split_plan();
  const SimulationResult r = sim.run(plan);
  return {r.iteration_time_s, sim.call_estimate(g.mfc_index("actor_gen"), plan.assignments[0]).time_s};
}

// Training bounds the step: asynchrony hides at most generation itself (max(g, t) against g + t).
TEST(TailAsynchrony, ATrainingBoundWorkloadGainsNoMoreThanItsGeneration) {
  const double gen = run(0, false, 0).generation_s;
  const double train = 100 * gen;
  const Outcome sync = run(0, false, train), async = run(1, false, train), streaming = run(1, true, train);
  EXPECT_NEAR(sync.iteration_s, gen + train, 1e-6 * train);
  EXPECT_NEAR(async.iteration_s, train, 1e-6 * train);  // no gain beyond the 1% generation was
  EXPECT_NEAR(streaming.iteration_s, train, 1e-6 * train);
}

// Generation bounds the step (training free): synchronous and one step off both wait for the batch's
// tail; streaming with partial rollouts settles at the streaming generation's time, the replica's tokens at
// a full batch, which is shorter.
TEST(TailAsynchrony, PartialRolloutsSettleAtTheStreamingGenerationsTime) {
  const Outcome sync = run(0, false, 0), async = run(1, false, 0), streaming = run(1, true, 0);
  EXPECT_NEAR(sync.iteration_s, sync.generation_s, 1e-9 * sync.iteration_s);
  EXPECT_NEAR(async.iteration_s, sync.generation_s, 1e-9 * sync.iteration_s);
  EXPECT_NEAR(streaming.iteration_s, streaming.generation_s, 1e-9 * streaming.iteration_s);
  EXPECT_LT(streaming.generation_s, 0.8 * sync.generation_s);
}

}  // namespace
}  // namespace realign
