#include "search/frontier.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

// Points at `sizes` devices whose iteration takes time(devices), priced for 1,000 samples an iteration.
std::vector<FrontierPoint> points(const std::vector<int64_t>& sizes, double (*time)(double)) {
  std::vector<FrontierPoint> out;
  for (int64_t d : sizes) {
    FrontierPoint p;
    p.devices = d;
    p.fits = true;
    p.iteration_time_s = time(double(d));
    price_point(p, 1000);
    out.push_back(p);
  }
  return out;
}

const std::vector<int64_t> kSizes = {4, 8, 16, 32, 64};

// Every call scales perfectly: 3,600 device-seconds of work take 1 GPU-hour at any size, so the GPU-hour line
// is flat and only the fastest size is on the Pareto set (the others cost the same and take longer).
TEST(Frontier, PerfectScalingGivesAFlatGpuHourLine) {
  auto ps = points(kSizes, [](double d) { return 3600.0 / d; });
  mark_frontier(ps, 0.5);
  for (const FrontierPoint& p : ps) {
    EXPECT_DOUBLE_EQ(p.gpu_hours_per_iteration, 1.0) << p.devices;
    EXPECT_DOUBLE_EQ(p.gpu_hours_per_1k_samples, 1.0);
    EXPECT_EQ(p.pareto, p.devices == 64) << p.devices;
  }
  EXPECT_TRUE(ps.back().knee);
  Objective cheapest{Objective::Kind::kGpuHours};
  EXPECT_EQ(choose_point(ps, cheapest), std::optional<size_t>(4));  // equal cost: the faster
}

// A serial part (100 s that no device count shortens) beside 6,400 device-seconds that scale: the time stops
// falling towards 100 s while the GPU-hours keep rising, every point is on the Pareto set, and the knee is
// before the first step whose relative time cut is below knee_gain x its relative cost growth: 4 -> 8 cuts
// 1700 -> 900 s (47%) for 6% more GPU-hours (ratio 8), 8 -> 16 cuts 44% for 11% (4), 16 -> 32 40% for 20%
// (2), 32 -> 64 33% for 33% (1): the knee is 64 at 0.5, 32 at 1.2, 16 at 2.5.
TEST(Frontier, ASerialPartMakesTheTimeStopFalling) {
  auto ps = points(kSizes, [](double d) { return 100.0 + 6400.0 / d; });
  mark_frontier(ps, 0.5);
  for (size_t i = 1; i < ps.size(); ++i) {
    EXPECT_LT(ps[i].iteration_time_s, ps[i - 1].iteration_time_s);
    EXPECT_GT(ps[i].gpu_hours_per_iteration, ps[i - 1].gpu_hours_per_iteration);
    // Each doubling buys less time than the one before.
    if (i > 1) {
      EXPECT_LT(ps[i - 1].iteration_time_s - ps[i].iteration_time_s,
                ps[i - 2].iteration_time_s - ps[i - 1].iteration_time_s);
    }
  }
  for (const FrontierPoint& p : ps) EXPECT_TRUE(p.pareto) << p.devices;
  EXPECT_TRUE(ps.back().knee);
  mark_frontier(ps, 1.2);
  for (const FrontierPoint& p : ps) EXPECT_EQ(p.knee, p.devices == 32) << p.devices;
  mark_frontier(ps, 2.5);
  for (const FrontierPoint& p : ps) EXPECT_EQ(p.knee, p.devices == 16) << p.devices;
  // time_within 1.5: the fastest is 200 s, so 300 s at most: 16 devices (500 s) is out, 32 (300 s) the
  // cheapest in.
  EXPECT_EQ(choose_point(ps, Objective{Objective::Kind::kTimeWithin, 1.5}), std::optional<size_t>(3));
  EXPECT_EQ(choose_point(ps, Objective{}), std::optional<size_t>(4));
  EXPECT_EQ(choose_point(ps, Objective{Objective::Kind::kGpuHours}), std::optional<size_t>(0));
}

// The Pareto set is monotone: ordered by GPU-hours, each point is faster than the one before; a point slower
// and dearer than another, or one that does not fit, is never on it.
TEST(Frontier, TheParetoSetIsMonotone) {
  auto ps = points({2, 4, 8, 16, 32, 64}, [](double d) { return d == 16 ? 1e4 : 100.0 + 6400.0 / d; });
  ps[1].fits = false;
  mark_frontier(ps, 0.5);
  EXPECT_FALSE(ps[1].pareto);
  EXPECT_FALSE(ps[3].pareto);  // 16 devices: slower and dearer than 8
  std::vector<const FrontierPoint*> set;
  for (const FrontierPoint& p : ps)
    if (p.pareto) set.push_back(&p);
  ASSERT_GE(set.size(), 3u);
  for (size_t i = 1; i < set.size(); ++i) {
    EXPECT_GT(set[i]->gpu_hours_per_iteration, set[i - 1]->gpu_hours_per_iteration);
    EXPECT_LT(set[i]->iteration_time_s, set[i - 1]->iteration_time_s);
  }
}

TEST(Frontier, SizesAreTheConfigsHalvesAndDoublesInWholeNodes) {
  Cluster c;
  c.n_nodes = 2;
  c.devices_per_node = 8;
  EXPECT_EQ(frontier_sizes(c, {}), (std::vector<int64_t>{4, 8, 16, 32, 64}));
  const Cluster half = cluster_of_size(c, 4);
  EXPECT_EQ(half.n_nodes, 1);
  EXPECT_EQ(half.devices_per_node, 4);
  EXPECT_EQ(cluster_of_size(c, 64).n_nodes, 8);
  FrontierOptions o;
  o.nodes = {1, 3};
  EXPECT_EQ(frontier_sizes(c, o), (std::vector<int64_t>{8, 24}));
  o = FrontierOptions{};
  o.devices = {12};
  EXPECT_THROW(frontier_sizes(c, o), Error);  // not whole nodes
  o.devices = {kMaxDevices * 2};
  EXPECT_THROW(frontier_sizes(c, o), Error);  // beyond the largest cluster realign plans
  // At the largest cluster the doubles are left out.
  c.n_nodes = kMaxDevices / 8;
  EXPECT_EQ(frontier_sizes(c, {}), (std::vector<int64_t>{kMaxDevices / 4, kMaxDevices / 2, kMaxDevices}));
}

TEST(Frontier, ObjectiveAndOptionsAreReadNamingTheField) {
  EXPECT_EQ(objective_from_json("gpu_hours", "plan.objective").kind, Objective::Kind::kGpuHours);
  const Objective w = objective_from_json(Json{{"time_within", 1.2}}, "plan.objective");
  EXPECT_EQ(w.kind, Objective::Kind::kTimeWithin);
  EXPECT_EQ(to_string(w), "time_within 1.2");
  try {
    objective_from_json(Json{{"time_within", 0.5}}, "plan.objective");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plan.objective.time_within"), std::string::npos) << e.what();
  }
  EXPECT_THROW(objective_from_json("cost", "plan.objective"), Error);
  EXPECT_THROW(frontier_options_from_json(Json{{"nodes", Json::array({0})}}, "plan.frontier"), Error);
  EXPECT_THROW(frontier_options_from_json(Json{{"nodes", Json::array({1})}, {"devices", Json::array({8})}},
                                          "plan.frontier"),
               Error);
  EXPECT_THROW(frontier_options_from_json(Json{{"sizes", 1}}, "plan.frontier"), Error);
}

}  // namespace
}  // namespace realign
