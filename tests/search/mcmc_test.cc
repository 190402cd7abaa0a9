#include "search/mcmc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "../plan/test_graphs.h"
#include "search/candidates.h"
#include "search/exhaustive.h"
#include "search/fake_evaluator.h"
#include "search/presets.h"

namespace realign {
namespace {

DataflowGraph grpo_graph() {
  return testing::graph_from_yaml(R"(
algorithm: grpo
models: {actor: llama2-7b}
batch: {prompts: 64, prompt_len: 128, gen_len: 512, samples_per_prompt: 4, mini_batches: 2}
)");
}

testing::FakeEvaluator grpo_evaluator(const DataflowGraph& g, double limit) {
  return testing::FakeEvaluator(
      g, 8,
      {{"actor_gen", 40.0}, {"ref_inf", 6.0}, {"reward_inf", 5.0}, {"actor_inf", 6.0}, {"actor_train", 30.0}},
      {{"actor_gen", 3.0}, {"ref_inf", 1.0}, {"reward_inf", 1.0}, {"actor_inf", 1.0}, {"actor_train", 6.0}},
      limit, 0.8);
}

TEST(Mcmc, ReachesTheExhaustiveOptimumOnEightDevices) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = grpo_evaluator(g, 2.0);
  CandidateOptions options;
  options.strategies_per_mesh_size = 1;
  const auto candidates = build_candidates(g, c, ev, options);
  const auto exact = exhaustive_search(g, candidates, ev);
  ASSERT_TRUE(exact.has_value());
  ASSERT_TRUE(exact->score.fits());
  // The space is not trivial: every call's fastest candidate alone is not the optimum.
  ExecutionPlan greedy;
  for (const auto& list : candidates) greedy.assignments.push_back(list.front());
  EXPECT_GT(ev.evaluate(greedy).time_s, exact->score.time_s * 1.01);
  int hits = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SearchOptions so;
    so.seed = seed;
    so.max_steps = 4000;
    so.time_budget_s = 60;
    const auto r = mcmc_search(g, candidates, ev, {}, so);
    EXPECT_GE(r.score.time_s, exact->score.time_s - 1e-12);  // nothing beats the exhaustive optimum
    hits += r.score.fits() && r.score.time_s <= exact->score.time_s + 1e-12;
  }
  EXPECT_GE(hits, 19);
}

TEST(Mcmc, SameSeedSameChain) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = grpo_evaluator(g, 2.0);
  const auto candidates = build_candidates(g, c, ev, CandidateOptions{});
  SearchOptions so;
  so.seed = 11;
  so.max_steps = 2000;
  so.time_budget_s = 60;
  const auto a = mcmc_search(g, candidates, ev, {}, so);
  const auto b = mcmc_search(g, candidates, ev, {}, so);
  EXPECT_EQ(a.plan, b.plan);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.accepted, b.accepted);
}

// best_step says where the chain found its result: cut there, the same chain ends with the same plan; one
// step earlier it had not found it yet.
TEST(Mcmc, BestStepIsWhereTheResultWasFound) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = grpo_evaluator(g, 2.0);
  const auto candidates = build_candidates(g, c, ev, CandidateOptions{});
  SearchOptions so;
  so.seed = 3;
  so.max_steps = 4000;
  so.time_budget_s = 60;
  const auto full = mcmc_search(g, candidates, ev, {}, so);
  ASSERT_GT(full.best_step, 0);
  ASSERT_LE(full.best_step, full.steps);
  so.max_steps = full.best_step;
  const auto cut = mcmc_search(g, candidates, ev, {}, so);
  EXPECT_EQ(cut.plan, full.plan);
  EXPECT_EQ(cut.best_step, full.best_step);
  so.max_steps = full.best_step - 1;
  EXPECT_GT(search_objective(mcmc_search(g, candidates, ev, {}, so).score), search_objective(full.score));
}

// A plan the chain proposes again is scored from memory: the evaluator sees each distinct plan once, and
// far fewer plans than the chain takes steps.
TEST(Mcmc, ScoresEachDistinctPlanOnce) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto fake = grpo_evaluator(g, 2.0);
  struct Recording : PlanEvaluator {
    PlanEvaluator* inner;
    std::map<std::string, int> seen;  // a plan's assignments and offloaded models -> evaluations
    explicit Recording(PlanEvaluator* e) : inner(e) {}
    PlanScore evaluate(const ExecutionPlan& plan) override {
      std::string key;
      for (const MfcAssignment& a : plan.assignments)
        key += std::to_string(a.mesh.first) + "+" + std::to_string(a.mesh.size) + ":" +
               to_string(a.strategy) + ";";
      for (Role m : plan.offload) key += "off:" + to_string(m) + ";";
      ++seen[key];
      return inner->evaluate(plan);
    }
    PlanScore evaluate_call(int mfc, const MfcAssignment& a) override { return inner->evaluate_call(mfc, a); }
  } ev(&fake);
  CandidateOptions options;
  options.strategies_per_mesh_size = 1;
  const auto candidates = build_candidates(g, c, ev, options);
  SearchOptions so;
  so.max_steps = 20000;
  so.time_budget_s = 60;
  const auto r = mcmc_search(g, candidates, ev, {}, so);
  int64_t total = 0;
  for (const auto& [plan, n] : ev.seen) total += n;
  EXPECT_EQ(total, r.evaluations);
  // The chain's first plan is evaluated once as its own start and once as the state it walks from.
  for (const auto& [plan, n] : ev.seen) EXPECT_LE(n, 2) << plan;
  EXPECT_LT(r.evaluations, r.steps / 2);
}

TEST(Mcmc, NeverWorseThanItsStarts) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = grpo_evaluator(g, 2.0);
  const auto candidates = build_candidates(g, c, ev, CandidateOptions{});
  std::vector<ExecutionPlan> starts;
  for (const auto& name : preset_names())
    if (auto p = make_preset(name, g, c, ev)) starts.push_back(*p);
  ASSERT_FALSE(starts.empty());
  SearchOptions so;
  so.max_steps = 50;  // too short to search: the best start must survive
  const auto r = mcmc_search(g, candidates, ev, starts, so);
  for (const auto& s : starts) EXPECT_LE(search_objective(r.score), search_objective(ev.evaluate(s)));
}

// A landscape where single moves cannot leave the best start: every call on layout A takes 10 s, every call
// on B 5 s, any mix 20 s (100% worse: a move there is never accepted). The best start is all-A; the other
// start is all-B but one call, one move from the optimum. A chain that only ever restarts from the best plan
// stays at 10 s; restarting from the starts in turn reaches 5 s.
class AllOrNothingEvaluator : public PlanEvaluator {
 public:
  explicit AllOrNothingEvaluator(DeviceMesh b_mesh) : b_(b_mesh) {}
  PlanScore evaluate(const ExecutionPlan& plan) override {
    size_t on_b = 0;
    for (const auto& a : plan.assignments) on_b += a.mesh == b_;
    PlanScore s;
    s.time_s = on_b == 0 ? 10.0 : on_b == plan.assignments.size() ? 5.0 : 20.0;
    return s;
  }
  PlanScore evaluate_call(int, const MfcAssignment&) override { return PlanScore{1.0, 0, 0}; }

 private:
  DeviceMesh b_;
};

TEST(Mcmc, RestartsFromEveryStartReachPlansNoSingleMoveReaches) {
  const auto g = grpo_graph();
  const MfcAssignment a_layout{"", DeviceMesh{0, 8}, Strategy{8, 1, 1}},
      b_layout{"", DeviceMesh{0, 4}, Strategy{4, 1, 1}};
  std::vector<std::vector<MfcAssignment>> candidates(g.mfcs.size());
  ExecutionPlan all_a, almost_b;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    MfcAssignment a = a_layout, b = b_layout;
    a.mfc = b.mfc = g.mfcs[i].name;
    candidates[i] = {a, b};
    all_a.assignments.push_back(a);
    almost_b.assignments.push_back(i == 0 ? a : b);
  }
  AllOrNothingEvaluator ev(b_layout.mesh);
  SearchOptions so;
  so.max_steps = 4000;
  so.restart_every = 50;
  so.time_budget_s = 60;
  so.offload = false;
  const auto r = mcmc_search(g, candidates, ev, {all_a, almost_b}, so);
  EXPECT_DOUBLE_EQ(r.score.time_s, 5.0);
  // From the best start alone there is no way out.
  EXPECT_DOUBLE_EQ(mcmc_search(g, candidates, ev, {all_a}, so).score.time_s, 10.0);
}

TEST(Mcmc, FindsAFittingPlanUnderTightMemory) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = grpo_evaluator(g, 0.8);  // actor_train needs tp*pp >= 8, generation >= 4
  const auto candidates = build_candidates(g, c, ev, CandidateOptions{});
  SearchOptions so;
  so.max_steps = 3000;
  const auto r = mcmc_search(g, candidates, ev, {}, so);
  ASSERT_TRUE(r.score.fits());
  const auto& train = r.plan.assignments[size_t(g.mfc_index("actor_train"))].strategy;
  EXPECT_GE(train.tp * train.pp, 8);
}

// The chain also decides which never-trained models to keep in host memory: with an evaluator under which
// offloading the reward model is what makes the plan fit, the search offloads it (and nothing else).
TEST(Mcmc, OffloadsAModelWhenThatMakesThePlanFit) {
  const auto g = testing::ppo_7b();
  const Cluster c = testing::h100(1);
  std::map<std::string, double> work, mem;
  for (const auto& m : g.mfcs) work[m.name] = 10, mem[m.name] = 1;
  struct OffloadMatters : testing::FakeEvaluator {
    using FakeEvaluator::FakeEvaluator;
    PlanScore evaluate(const ExecutionPlan& plan) override {
      PlanScore s = FakeEvaluator::evaluate(plan);
      const auto has = [&](Role m) { return std::count(plan.offload.begin(), plan.offload.end(), m) > 0; };
      if (!has(Role::kReward))
        s.overflow_bytes += 1e9;             // does not fit unless the reward model leaves the devices
      if (has(Role::kRef)) s.time_s += 1.0;  // offloading costs load time
      return s;
    }
  } ev(g, 8, work, mem, 10.0, 0.5);
  const auto candidates = build_candidates(g, c, ev, CandidateOptions{});
  SearchOptions so;
  so.max_steps = 3000;
  so.time_budget_s = 60;
  const auto r = mcmc_search(g, candidates, ev, {}, so);
  EXPECT_TRUE(r.score.fits());
  EXPECT_EQ(r.plan.offload, std::vector<Role>{Role::kReward});
}

// The engines' searches (generation_waves: generation on a serving engine) propose a generation tp over whole
// nodes, as vLLM and SGLang run one; realign's own search, and every other call, keep tp within a node.
TEST(Candidates, OnlyAServingEnginesGenerationIsProposedATpOverWholeNodes) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(2);
  auto max_tp = [&](const std::string& call, bool serving) {
    const Mfc& m = g.mfcs[size_t(g.mfc_index(call))];
    int most = 0;
    for (const auto& s : enumerate_strategies(m, g.model(m.model).spec, c, 16, 16, serving))
      most = std::max(most, s.tp);
    return most;
  };
  EXPECT_EQ(max_tp("actor_gen", true), 16);
  EXPECT_EQ(max_tp("actor_gen", false), 8);
  EXPECT_EQ(max_tp("actor_train", true), 8);
}

TEST(Candidates, StrategiesAreValidAndPruned) {
  const auto g = grpo_graph();
  const Cluster c = testing::h100(1);
  auto ev = grpo_evaluator(g, 2.0);
  for (size_t i = 0; i < g.mfcs.size(); ++i)
    for (const auto& s : enumerate_strategies(g.mfcs[i], g.model(g.mfcs[i].model).spec, c, 8))
      EXPECT_EQ(strategy_problem(g.mfcs[i], g.model(g.mfcs[i].model).spec, c, 8, s), "");
  CandidateOptions options;
  options.strategies_per_mesh_size = 2;
  const auto candidates = build_candidates(g, c, ev, options);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto& list = candidates[i];
    ASSERT_FALSE(list.empty());
    std::map<int, int> per_size;
    for (size_t k = 0; k < list.size(); ++k) {
      EXPECT_TRUE(ev.evaluate_call(int(i), list[k]).fits());
      if (k > 0) {
        EXPECT_LE(ev.evaluate_call(int(i), list[k - 1]).time_s, ev.evaluate_call(int(i), list[k]).time_s);
      }
      per_size[list[k].mesh.size]++;
    }
    // At most two strategies per mesh size, placed at every position of that size (8/size positions).
    for (const auto& [size, count] : per_size) EXPECT_LE(count, 2 * (8 / size));
  }
}

}  // namespace
}  // namespace realign
