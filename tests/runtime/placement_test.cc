// A model moved from its home layout to other layouts computes the same log-probs there (multi-process,
// Gloo): reallocation changes where the parameters are, never the mathematics.
#include <gtest/gtest.h>

#include "comm/launcher.h"
#include "graph/algorithms.h"
#include "runtime/call_layouts.h"

namespace realign::runtime {
namespace {

TEST(Placement, MovedShardsComputeTheSameLogprobsOnEveryLayout) {
  comm::LaunchOptions o;
  o.nprocs = 4;
  // Home: the train layout with pipeline stages; calls: wider dp, tp 4, a single device at an offset.
  o.argv = {PLACEMENT_TEST_WORKER, "d1t2p2", "d2t2p1", "d4t1p1", "d1t4p1", "d1t1p1@3", "d1t2p1@2"};
  o.capture_output = true;
  o.forward_output = false;
  const comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

TEST(Placement, RowsReachTheRanksOfTheNextCallPadded) {
  comm::LaunchOptions o;
  o.nprocs = 4;
  o.argv = {PLACEMENT_TEST_WORKER, "rows", "d2t1p2", "d4t1p1", "d1t2p1@2", "d2t2p1", "d1t1p1@3", "d2t1p2"};
  o.capture_output = true;
  o.forward_output = false;
  const comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

// Rows go from the ranks that produced them straight to the consumer's: a consumer that holds every row
// receives nothing, where a pass through a dp-over-every-rank batch layout would move them out and back; the
// inputs of one consumer from two producers travel in one message per pair of ranks, fewer bytes than through
// the batch layout.
TEST(Placement, RowsMoveFromTheirProducersRanksWithoutABatchLayoutPass) {
  comm::LaunchOptions o;
  o.nprocs = 4;
  o.argv = {PLACEMENT_TEST_WORKER, "direct"};
  o.capture_output = true;
  o.forward_output = false;
  const comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
  EXPECT_NE(r.output_text().find("gen -> inf 0 bytes"), std::string::npos) << r.output_text();
}

TEST(CallLayouts, TrainedModelsLiveInTheirTrainLayoutOthersInTheirFirstCall) {
  Json config = {{"algorithm", "ppo"},
                 {"models", {{"actor", "llama-tiny"}, {"critic", "llama-tiny"}}},
                 {"batch", {{"prompts", 8}, {"prompt_len", 8}, {"gen_len", 8}, {"mini_batches", 1}}}};
  ObjectReader root(config, "");
  const DataflowGraph graph = build_graph(algorithm_config_from_json(root));
  ExecutionPlan plan;
  int offset = 0;
  for (const auto& mfc : graph.mfcs) {
    MfcAssignment a;
    a.mfc = mfc.name;
    a.mesh = DeviceMesh{offset % 4, 1};
    a.strategy = Strategy{1, 1, 1, 1 + offset % 2};
    plan.assignments.push_back(a);
    ++offset;
  }
  const CallLayouts layouts = call_layouts(graph, plan);
  for (const auto& a : plan.assignments) EXPECT_EQ(layouts.micro_batches.at(a.mfc), a.strategy.micro_batches);
  for (const auto& role : graph.models) {
    const int train = graph.train_call(role.role);
    std::string first;
    for (const auto& mfc : graph.mfcs)
      if (mfc.model == role.role && first.empty()) first = mfc.name;
    const std::string owner = train >= 0 ? graph.mfcs[size_t(train)].name : first;
    EXPECT_EQ(layouts.home.at(role.role), layouts.call.at(owner)) << role.role;
  }
  // ZeRO-1 is the trained model's, from its train call.
  EXPECT_FALSE(layouts.zero1.at(Role::kActor));
  EXPECT_FALSE(layouts.zero1.count(Role::kRef));
  plan.assignments[size_t(graph.train_call(Role::kCritic))].strategy.zero1 = true;
  EXPECT_TRUE(call_layouts(graph, plan).zero1.at(Role::kCritic));
  plan.assignments.pop_back();
  EXPECT_THROW(call_layouts(graph, plan), Error);
}

}  // namespace
}  // namespace realign::runtime
