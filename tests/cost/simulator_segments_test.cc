// The simulator keeps the devices between two layout boundaries as one timeline segment (they are always busy
// alike). Checked against the events themselves on random plans: every device's busy time is the sum of the
// events that cover it, in the order they were placed, and no device runs two events at once.
#include <gtest/gtest.h>

#include "core/rng.h"
#include "cost/fixtures.h"
#include "cost/simulator.h"

namespace realign {
namespace {

using testing::assign;

ExecutionPlan random_plan(const DataflowGraph& graph, int world, Rng& rng) {
  ExecutionPlan plan;
  for (const Mfc& mfc : graph.mfcs) {
    const int dp = 1 << rng.uniform_int(3), tp = 1 << rng.uniform_int(4), pp = 1 + int(rng.uniform_int(2));
    if (dp * tp * pp > world) {
      plan.assignments.push_back(assign(mfc.name, 0, 1, world / 2, 2));
      continue;
    }
    plan.assignments.push_back(assign(mfc.name, int(rng.uniform_int(world - dp * tp * pp + 1)), dp, tp, pp));
  }
  return plan;
}

TEST(SimulatorSegments, EveryDeviceIsBusyForTheEventsThatCoverIt) {
  const DataflowGraph graph = testing::make_graph("ppo", "llama2-7b", 128, 256, 256, 4);
  const Cluster cluster = testing::make_cluster(2, 8);
  Simulator sim(graph, cluster, default_profile(cluster.device));
  Rng rng(3);
  for (int k = 0; k < 40; ++k) {
    const ExecutionPlan plan = random_plan(graph, 16, rng);
    const SimulationResult r = sim.run(plan);
    ASSERT_GT(r.iteration_time_s, 0);
    std::vector<double> busy(16, 0.0), free(16, 0.0);
    for (const TimelineEvent& e : r.timeline.events)
      for (int d = e.first_device; d < e.first_device + e.n_devices; ++d) {
        EXPECT_GE(e.start_s, free[size_t(d)]) << "device " << d << " runs two events at once: " << e.name;
        busy[size_t(d)] += e.end_s - e.start_s;
        free[size_t(d)] = e.end_s;
      }
    for (int d = 0; d < 16; ++d)
      EXPECT_EQ(r.device_idle_fraction[size_t(d)], 1.0 - busy[size_t(d)] / r.iteration_time_s)
          << "plan " << k << ", device " << d;
    // The search's score is the same simulation without the events.
    const SimulationResult s = sim.score(plan);
    EXPECT_EQ(s.iteration_time_s, r.iteration_time_s);
    EXPECT_EQ(s.device_idle_fraction, r.device_idle_fraction);
    EXPECT_EQ(s.device_peak_mem_bytes, r.device_peak_mem_bytes);
  }
}

}  // namespace
}  // namespace realign
