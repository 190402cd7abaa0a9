// The reallocation plan between layouts that differ in expert parallelism: every element of every expert a
// destination holds is produced exactly once, and what crosses the wire is exactly what it lacked.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "realloc/plan_test_util.h"
#include "realloc/transfer_plan.h"

namespace realign {
namespace {

// Coverage counts per (destination, parameter, expert), per position along the slice dim; an expert stack's
// elements are checked expert by expert (held_expert_slice), every other parameter as a whole (held_slice).
void check_ep_plan(const std::vector<ParamInfo>& params, int64_t n_layers, const TransferPlan& plan,
                   const std::string& what) {
  const Layout& from = plan.from;
  const Layout& to = plan.to;
  auto held = [&](const ParamInfo& p, int64_t e, const Layout& l, int d) {
    return e >= 0 ? held_expert_slice(p, e, n_layers, l, d) : held_slice(p, n_layers, l, d);
  };
  auto per_position = [](const ParamInfo& p, int64_t e) {
    const int64_t n = p.numel() / p.shape[size_t(slice_dim(p))];
    return e >= 0 ? n / p.shape[0] : n;
  };
  std::map<std::tuple<int, int, int64_t>, std::vector<int>> cover;
  int64_t minimum = 0;
  for (int d = to.first_device; d < to.first_device + to.size(); ++d)
    for (size_t i = 0; i < params.size(); ++i) {
      const ParamInfo& p = params[i];
      for (int64_t e = p.expert ? 0 : -1; e < (p.expert ? p.shape[0] : 0); ++e) {
        const Range need = held(p, e, to, d);
        if (need.size() == 0) continue;
        cover[{d, int(i), e}].assign(size_t(need.size()), 0);
        minimum += (need.size() - intersect(need, held(p, e, from, d)).size()) * per_position(p, e);
      }
    }
  int64_t moved = 0;
  auto apply = [&](const SliceTransfer& t, bool local) {
    const ParamInfo& p = params[size_t(t.param)];
    ASSERT_EQ(t.expert >= 0, p.expert) << what << " " << p.name;
    ASSERT_EQ(local, t.src == t.dst) << what;
    const Range src_held = held(p, t.expert, from, t.src), dst_held = held(p, t.expert, to, t.dst);
    ASSERT_GT(t.range.size(), 0) << what;
    ASSERT_TRUE(t.range.begin >= src_held.begin && t.range.end <= src_held.end)
        << what << ": rank " << t.src << " does not hold " << p.name << " expert " << t.expert;
    ASSERT_EQ(t.src_offset, t.range.begin - src_held.begin) << what;
    ASSERT_EQ(t.dst_offset, t.range.begin - dst_held.begin) << what;
    ASSERT_EQ(t.numel, t.range.size() * per_position(p, t.expert)) << what << " " << p.name;
    auto it = cover.find({t.dst, t.param, t.expert});
    ASSERT_NE(it, cover.end()) << what << ": rank " << t.dst << " does not need " << p.name << " expert "
                               << t.expert;
    for (int64_t k = t.range.begin; k < t.range.end; ++k) ++it->second[size_t(k - dst_held.begin)];
    if (!local) moved += t.numel;
  };
  for (const auto& t : plan.local_copies) apply(t, true);
  for (const auto& t : plan.transfers) apply(t, false);
  for (const auto& [key, counts] : cover)
    for (size_t k = 0; k < counts.size(); ++k)
      ASSERT_EQ(counts[k], 1) << what << ": rank " << std::get<0>(key) << " "
                              << params[size_t(std::get<1>(key))].name << " expert " << std::get<2>(key)
                              << " position " << k;
  EXPECT_EQ(moved, plan.elements_moved) << what;
  EXPECT_EQ(minimum, plan.elements_minimum) << what;
  EXPECT_EQ(plan.elements_moved, plan.elements_minimum) << what;
}

TEST(TransferPlanEp, RandomPairsDifferingInEpCoverEveryExpertOnceAndMoveTheMinimum) {
  const ModelSpec spec = testing::moe_odd();
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  Rng rng(11);
  int differing = 0;
  for (int k = 0; k < 300; ++k) {
    const int world = k % 3 == 0 ? 16 : 8;
    Layout from = testing::random_layout(rng, world, {1, 2, 3, 4}, 3);
    Layout to = testing::random_layout(rng, world, {1, 2, 4}, 3);
    from.ep = testing::random_ep(rng, spec, from);
    to.ep = testing::random_ep(rng, spec, to);
    differing += from.ep != to.ep;
    const std::string what = to_string(from) + " -> " + to_string(to);
    check_ep_plan(params, spec.n_layers, plan_reallocation(params, spec.n_layers, from, to), what);
  }
  EXPECT_GT(differing, 150);
}

TEST(TransferPlanEp, SameDevicesOtherEpMovesOnlyTheExpertsARankLacks) {
  // d4t1p1: ep 1 -> ep 4 on the same ranks: every rank holds every expert before, so nothing moves; back
  // from ep 4 to ep 1 each rank receives the 9 experts it lacks of each stack.
  const ModelSpec spec = testing::moe_odd();
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  const TransferPlan down =
      plan_reallocation(params, spec.n_layers, parse_layout("d4t1p1"), parse_layout("d4t1p1e4"));
  EXPECT_EQ(down.elements_moved, 0);
  const TransferPlan up =
      plan_reallocation(params, spec.n_layers, parse_layout("d4t1p1e4"), parse_layout("d4t1p1"));
  int64_t expert_elements = 0;
  for (const ParamInfo& p : params)
    if (p.expert) expert_elements += p.numel();
  EXPECT_EQ(up.elements_moved, 4 * expert_elements * 3 / 4);
  check_ep_plan(params, spec.n_layers, up, "d4t1p1e4 -> d4t1p1");
}

}  // namespace
}  // namespace realign
