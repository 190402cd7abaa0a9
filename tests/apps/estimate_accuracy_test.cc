#include "apps/estimate_accuracy.h"

#include <gtest/gtest.h>

#include <set>

#include "core/config_file.h"

namespace realign::apps {
namespace {

TEST(EstimateAccuracy, KendallTauAndMedian) {
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Pairs: (1,2) +, (1,3) +, (2,3) - -> (2 - 1) / 3.
  EXPECT_NEAR(kendall_tau({1, 2, 3}, {1, 3, 2}), 1.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(relative_error(1.5, 1.0), 0.5);
}

// Three rounds of four plans: the first two agree, the third swaps the two closest plans. The estimate
// swaps those two as well, and the first two plans, which every round orders alike.
TEST(EstimateAccuracy, RoundsAgreeAsTheirRankingsDo) {
  const RoundAgreement a = round_agreement({{1.0, 2.0, 3.0, 3.1}, {1.1, 2.1, 2.9, 3.0}, {1.0, 2.0, 3.2, 3.1}},
                                           {2.0, 1.0, 3.1, 3.0});
  EXPECT_EQ(a.pairs, 3);
  EXPECT_DOUBLE_EQ(a.max, 1.0);        // rounds 1 and 2
  EXPECT_DOUBLE_EQ(a.min, 4.0 / 6.0);  // one of 6 pairs of plans swapped: (5 - 1) / 6
  EXPECT_DOUBLE_EQ(a.median, 4.0 / 6.0);
  EXPECT_EQ(a.resolved_pairs, 5);                                 // all but plans 3 and 4
  EXPECT_EQ(a.estimate_agrees, 4);                                // all but plans 1 and 2
  EXPECT_EQ(round_agreement({{1.0, 2.0}}, {1.0, 2.0}).pairs, 0);  // one round: nothing to compare
}

TEST(EstimateAccuracy, PlansAreDistinctValidAndRunnable) {
  const RunConfig config = run_config_from_json(parse_yaml(R"(
algorithm: ppo
models: {actor: llama-tiny, critic: llama-tiny}
batch: {prompts: 32, prompt_len: 6, gen_len: 4, mini_batches: 2}
cluster: {nodes: 1, devices_per_node: 4, device: cpu-gloo}
)",
                                                           "test.yaml"));
  Simulator simulator(config.graph, config.cluster, default_profile(config.cluster.device));
  const auto plans = plans_to_measure(config, simulator, 8, 3);
  ASSERT_EQ(plans.size(), 8u);
  EXPECT_EQ(plans[0].name, "co-located");

  std::set<std::string> seen;
  int subset_train = 0;  // plans training a model on part of the devices, which the runtime now executes
  for (auto p : plans) {
    EXPECT_NO_THROW(validate_plan(config.graph, config.cluster, p.plan)) << p.name;
    EXPECT_TRUE(seen.insert(to_json(p.plan).at("mfcs").dump()).second) << p.name << " repeats a plan";
    for (const auto& a : p.plan.assignments) {
      const Mfc& mfc = config.graph.mfcs[size_t(config.graph.mfc_index(a.mfc))];
      if (mfc.kind() == MfcKind::kTrain && a.mesh.size < 4) ++subset_train;
    }
  }
  EXPECT_GT(subset_train, 0);
  // The same seed gives the same plans.
  const auto again = plans_to_measure(config, simulator, 8, 3);
  for (size_t i = 0; i < plans.size(); ++i) EXPECT_EQ(plans[i].plan, again[i].plan);
}

}  // namespace
}  // namespace realign::apps
