// Context parallelism in a plan (Strategy::cp, cp_kind): its JSON, its spelling, where its parameters lie,
// and the rules validation keeps, each refusal naming the field.
#include <gtest/gtest.h>

#include "core/error.h"
#include "plan/execution_plan.h"
#include "test_graphs.h"

namespace realign {
namespace {

// A co-located plan of `g` on 8 devices, with `train`'s strategy for actor_train (its index: train_at).
ExecutionPlan ppo_plan(const Strategy& train, const DataflowGraph& g = testing::ppo_7b()) {
  ExecutionPlan p;
  for (const Mfc& m : g.mfcs) p.assignments.push_back({m.name, DeviceMesh{0, 8}, Strategy{8, 1, 1, 1}});
  p.assignments[size_t(g.mfc_index("actor_train"))].strategy = train;
  return p;
}
int train_at() { return testing::ppo_7b().mfc_index("actor_train"); }
std::string field(const std::string& leaf) { return "plan.mfcs[" + std::to_string(train_at()) + "]" + leaf; }

Strategy with_cp(Strategy s, int cp, ContextParallel kind = ContextParallel::kRing) {
  s.cp = cp;
  s.cp_kind = kind;
  return s;
}

TEST(ContextParallel, JsonRoundTripsAndIsAbsentWithoutIt) {
  ExecutionPlan p = ppo_plan(with_cp(Strategy{2, 2, 1, 4, true, false}, 2));
  const size_t t = size_t(train_at()), other = t == 0 ? 1 : 0;
  p.assignments[other].strategy = with_cp(Strategy{2, 1, 1, 2}, 4, ContextParallel::kUlysses);
  const Json j = to_json(p);
  EXPECT_EQ(j["mfcs"][t]["cp"], 2);
  EXPECT_FALSE(j["mfcs"][t].contains("cp_kind"));  // the ring, Megatron's, is the default
  EXPECT_EQ(j["mfcs"][other]["cp_kind"], "ulysses");
  EXPECT_FALSE(j["mfcs"][t == 2 ? 3 : 2].contains("cp"));  // plans without it are unchanged
  EXPECT_EQ(plan_from_json(j, "plan"), p);
  Json bad = j;
  bad["mfcs"][other]["cp_kind"] = "zigzag";
  try {
    plan_from_json(bad, "plan");
    ADD_FAILURE() << "read an unknown kind";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "plan.mfcs[" + std::to_string(other) + "].cp_kind");
  }
  bad = j;
  bad["mfcs"][t]["cp"] = 0;
  EXPECT_THROW(plan_from_json(bad, "plan"), Error);
}

TEST(ContextParallel, SpelledAfterPpAndItsParametersLieAsDpTimesCpReplicas) {
  Strategy s = with_cp(Strategy{4, 2, 8, 8, true, false}, 2);
  s.ep = 16;
  EXPECT_EQ(to_string(s), "d4t2p8c2e16 x8 zero1");
  EXPECT_EQ(to_string(with_cp(Strategy{2, 1, 1, 2}, 4, ContextParallel::kUlysses)), "d2t1p1c4 x2 ulysses");
  EXPECT_EQ(s.replicas(), 8);
  const MfcAssignment a{"actor_train", DeviceMesh{0, 128}, s};
  EXPECT_EQ(a.layout(), (Layout{0, 8, 2, 8, 16}));
  EXPECT_NE(s, with_cp(s, 1));
  EXPECT_NE(s, with_cp(s, 2, ContextParallel::kUlysses));
}

// Validation of ppo_plan's actor_train with `train`; empty when valid, else the field named and why.
std::string refused_field(const Strategy& train, int mesh_size = 8,
                          const DataflowGraph& g = testing::ppo_7b()) {
  ExecutionPlan p = ppo_plan(train, g);
  p.assignments[size_t(g.mfc_index("actor_train"))].mesh = DeviceMesh{0, mesh_size};
  try {
    validate_plan(g, testing::h100(1), p);
  } catch (const Error& e) {
    return e.path() + ": " + e.what();
  }
  return "";
}

TEST(ContextParallel, ValidationKeepsItsRulesNamingTheField) {
  EXPECT_EQ(refused_field(with_cp(Strategy{2, 2, 1, 1}, 2)), "");
  EXPECT_EQ(refused_field(with_cp(Strategy{2, 1, 1, 1}, 4, ContextParallel::kUlysses)), "");  // 32 heads
  // dp*tp*pp*cp must be the mesh, as dp*tp*pp is without it.
  const std::string mesh = refused_field(with_cp(Strategy{4, 2, 1, 1}, 2));
  EXPECT_EQ(mesh.rfind(field(": "), 0), 0u) << mesh;
  EXPECT_NE(mesh.find("dp*tp*pp*cp = 4*2*1*2 = 16 does not equal the mesh's 8 devices"), std::string::npos)
      << mesh;
  // cp divides the call's sequences: here 128 + 385 = 513 tokens.
  const DataflowGraph odd = testing::graph_from_yaml(R"(
algorithm: ppo
models: {actor: llama2-7b, critic: llama2-7b}
batch: {prompts: 512, prompt_len: 128, gen_len: 385, mini_batches: 4}
)");
  const std::string len = refused_field(with_cp(Strategy{4, 1, 1, 1}, 2), 8, odd);
  EXPECT_EQ(len.rfind(field(".cp: "), 0), 0u) << len;
  EXPECT_NE(len.find("cp 2 does not divide the 513 tokens"), std::string::npos) << len;
  // Generation decodes a token a step: nothing to split.
  const DataflowGraph g = testing::ppo_7b();
  ExecutionPlan p = ppo_plan(Strategy{8, 1, 1, 1});
  const int gen = g.mfc_index("actor_gen");
  p.assignments[size_t(gen)].strategy = with_cp(Strategy{4, 1, 1, 1}, 2);
  try {
    validate_plan(g, testing::h100(1), p);
    ADD_FAILURE() << "generation took cp 2";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "plan.mfcs[" + std::to_string(gen) + "].cp") << e.what();
  }
}

TEST(ContextParallel, UlyssesNeedsEachRanksHeadsToDivideByCp) {
  ModelSpec spec = builtin_model("llama2-7b");  // 32 heads, 32 KV heads
  const DataflowGraph g = testing::ppo_7b();
  const Mfc& train = g.mfcs[size_t(g.mfc_index("actor_train"))];
  const Cluster c = testing::h100(1);
  const Strategy ulysses8 = with_cp(Strategy{1, 1, 1, 1}, 8, ContextParallel::kUlysses);
  EXPECT_EQ(strategy_problem(train, spec, c, 8, ulysses8), "");
  spec.n_heads = 28;  // Qwen2.5-7B's 28 heads over 4 KV heads
  spec.n_kv_heads = 4;
  const std::string why = strategy_problem(train, spec, c, 8, ulysses8);
  EXPECT_EQ(why.rfind("cp 8 (Ulysses) does not divide the 28 attention heads", 0), 0u) << why;
  // 4 ranks take 7 heads each, and one KV head each.
  EXPECT_EQ(strategy_problem(train, spec, c, 4, with_cp(Strategy{1, 1, 1, 1}, 4, ContextParallel::kUlysses)),
            "");
  // The ring splits tokens, not heads.
  EXPECT_EQ(strategy_problem(train, spec, c, 8, with_cp(Strategy{1, 1, 1, 1}, 8)), "");
  // With tp the heads per tp rank count: 28 / 2 = 14 over 4 does not go.
  const std::string tp =
      strategy_problem(train, spec, c, 8, with_cp(Strategy{1, 2, 1, 1}, 4, ContextParallel::kUlysses));
  EXPECT_EQ(tp.rfind("cp 4 (Ulysses) does not divide the 14 attention heads per tp rank", 0), 0u) << tp;
}

}  // namespace
}  // namespace realign
