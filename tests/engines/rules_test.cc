// Each engine's placement rules, pinned one by one, and the inputs each engine refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"
#include "engines/placements.h"

namespace realign {
namespace {

using engines::make_engine;
using testing::h100;
using testing::ppo_7b;

size_t call(const DataflowGraph& g, const std::string& name) { return size_t(g.mfc_index(name)); }

// docs/engines.md's Sources table: "| engine | owner/repo `path`[, `path`] | ... |" rows, each file as
// "owner/repo path" (a file in the same folder as the row's first may be written by its name alone).
std::set<std::string> documented_sources() {
  std::ifstream in(std::string(REALIGN_SOURCE_DIR) + "/docs/engines.md");
  std::set<std::string> out;
  bool in_sources = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_sources = line == "## Sources";
    if (!in_sources || line.rfind("| ", 0) != 0) continue;
    const size_t cell = line.find("| ", 2) + 2, end = line.find(" |", cell);
    const std::string files = line.substr(cell, end - cell);
    const std::string repo = files.substr(0, files.find(' '));
    std::string folder;
    for (size_t open = files.find('`'); open != std::string::npos; open = files.find('`', open + 1)) {
      const size_t close = files.find('`', open + 1);
      std::string path = files.substr(open + 1, close - open - 1);
      if (folder.empty()) folder = path.substr(0, path.rfind('/') + 1);
      if (path.find('/') == std::string::npos) path = folder + path;
      out.insert(repo + " " + path);
      open = close;
    }
  }
  return out;
}

TEST(EngineRules, EveryRuleCitesAFileOfTheSourcesTable) {
  const std::set<std::string> documented = documented_sources();
  ASSERT_GT(documented.size(), 20u);
  for (const auto& name : engines::engine_names()) {
    const auto e = make_engine(name);
    ASSERT_FALSE(e->rules().empty()) << name;
    for (const auto& r : e->rules()) {
      EXPECT_FALSE(r.text.empty()) << name;
      EXPECT_EQ(documented.count(r.source), 1u) << name << ": " << r.source << " (" << r.text << ")";
    }
  }
}

TEST(EngineRules, UnknownEngineIsAnErrorNamingTheChoices) {
  try {
    make_engine("deepspeed-chat");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("verl, openrlhf, areal or nemo-rl"), std::string::npos) << e.what();
  }
}

TEST(EngineRules, VerlHybridEngineIsOnePoolWithMegatronRolesInTheActorsLayout) {
  const auto verl = make_engine("verl");
  const DataflowGraph g = build_graph(ppo_7b());
  const Cluster c = h100(2);
  const auto placements = verl->placements(g, c);
  ASSERT_EQ(placements.size(), 2u);  // on Megatron, then on FSDP
  for (const auto& q : placements)
    for (const DeviceMesh& m : q.meshes) EXPECT_EQ(m, (DeviceMesh{0, 16}));
  EXPECT_EQ(placements[0].options["backend"], "megatron");
  EXPECT_EQ(placements[1].options["backend"], "fsdp");
  EXPECT_EQ(placements[1].options["zero_stage"], 3);
  const auto tied = verl->tied(g);
  ASSERT_EQ(tied.size(), 1u);
  EXPECT_EQ(tied[0].front(), "actor_train");
  for (const char* name : {"actor_inf", "ref_inf", "critic_inf", "critic_train", "reward_inf"})
    EXPECT_NE(std::find(tied[0].begin(), tied[0].end(), name), tied[0].end()) << name;
  const auto& p = placements[0];
  // Rollout: tensor parallelism only.
  EXPECT_EQ(verl->strategy_problem(g, p, call(g, "actor_gen"), 16, Strategy{8, 2, 1, 1}), "");
  EXPECT_NE(verl->strategy_problem(g, p, call(g, "actor_gen"), 16, Strategy{4, 2, 2, 2}), "");
  // Megatron stages hold equal layer counts: 32 layers split over 4 stages, not 3.
  EXPECT_EQ(verl->strategy_problem(g, p, call(g, "actor_train"), 16, Strategy{1, 4, 4, 4}), "");
  EXPECT_NE(verl->strategy_problem(g, p, call(g, "actor_train"), 12, Strategy{1, 4, 3, 4}), "");
  EXPECT_TRUE(verl->can_offload());
  // FSDP: data parallel over the pool, the optimizer state sharded.
  const auto& f = placements[1];
  EXPECT_EQ(verl->strategy_problem(g, f, call(g, "actor_train"), 16, Strategy{16, 1, 1, 4, true, true}), "");
  EXPECT_NE(verl->strategy_problem(g, f, call(g, "actor_train"), 16, Strategy{16, 1, 1, 4, false}), "");
  EXPECT_NE(verl->strategy_problem(g, f, call(g, "critic_train"), 16, Strategy{4, 4, 1, 4, true}), "");
  EXPECT_EQ(verl->strategy_problem(g, f, call(g, "ref_inf"), 16, Strategy{16, 1, 1, 2}), "");
}

TEST(EngineRules, VerlFullyAsyncSplitsRolloutFromTrainingAndRefusesACritic) {
  const auto verl = make_engine("verl");
  const Cluster c = h100(2);
  EXPECT_THROW(verl->check_graph(build_graph(ppo_7b(1)), c), Error);
  AlgorithmConfig grpo = ppo_7b(1);
  grpo.algorithm = Algorithm::kGrpo;
  grpo.batch.samples_per_prompt = 8;
  const DataflowGraph g = build_graph(grpo);
  verl->check_graph(g, c);
  const auto placements = verl->placements(g, c);
  ASSERT_FALSE(placements.empty());
  for (const auto& p : placements) {
    const DeviceMesh gen = p.meshes[call(g, "actor_gen")], train = p.meshes[call(g, "actor_train")];
    EXPECT_FALSE(gen.overlaps(train));
    EXPECT_EQ(gen.size + train.size, 16);
  }
  EXPECT_TRUE(verl->pricing(g).broadcast_weight_sync);
  EXPECT_FALSE(verl->pricing(build_graph(ppo_7b())).broadcast_weight_sync);
}

TEST(EngineRules, VerlReferenceMustBeTheActorsCheckpoint) {
  AlgorithmConfig a = ppo_7b();
  a.models[Role::kRef] = resolve_model_spec("llama2-13b", "models.ref");
  try {
    make_engine("verl")->check_graph(build_graph(a), h100(2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("models.ref"), std::string::npos) << e.what();
  }
}

TEST(EngineRules, OpenRlhfTrainsDataParallelWithZeroAndOneCheckpointingSwitch) {
  const auto o = make_engine("openrlhf");
  const DataflowGraph g = build_graph(ppo_7b());
  const auto placements = o->placements(g, h100(2));
  ASSERT_FALSE(placements.empty());
  bool colocated = false, apart = false;
  for (const auto& p : placements) {
    const int stage = p.options.value("zero_stage", 0);
    EXPECT_TRUE(stage == 2 || stage == 3);
    const DeviceMesh gen = p.meshes[call(g, "actor_gen")], actor = p.meshes[call(g, "actor_train")];
    // Actor and reference together (--colocate_actor_ref), critic and reward together.
    EXPECT_EQ(actor, p.meshes[call(g, "ref_inf")]);
    EXPECT_EQ(p.meshes[call(g, "critic_train")], p.meshes[call(g, "reward_inf")]);
    colocated |= gen == actor;
    apart |= !gen.overlaps(actor);
  }
  EXPECT_TRUE(colocated && apart);
  const auto& p = placements[0];
  const size_t train = call(g, "actor_train");
  EXPECT_NE(o->strategy_problem(g, p, train, 16, Strategy{8, 2, 1, 1, true}), "");    // no tensor parallel
  EXPECT_NE(o->strategy_problem(g, p, train, 16, Strategy{16, 1, 1, 1, false}), "");  // ZeRO shards over dp
  Strategy s{16, 1, 1, 1, true};
  s.recompute = !p.options.value("gradient_checkpointing", false);
  EXPECT_NE(o->strategy_problem(g, p, train, 16, s), "");
  s.recompute = !s.recompute;
  EXPECT_EQ(o->strategy_problem(g, p, train, 16, s), "");
  EXPECT_NE(o->strategy_problem(g, p, call(g, "actor_gen"), 16, Strategy{4, 2, 2, 1}), "");  // vLLM: no pp
  EXPECT_FALSE(o->can_offload());
}

TEST(EngineRules, ArealDecouplesGenerationAndRefusesARewardModel) {
  const auto a = make_engine("areal");
  try {
    a->check_graph(build_graph(ppo_7b()), h100(2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reward.kind"), std::string::npos) << e.what();
  }
  AlgorithmConfig cfg = ppo_7b(2);
  cfg.reward_model = false;
  const DataflowGraph g = build_graph(cfg);
  a->check_graph(g, h100(2));
  for (const auto& p : a->placements(g, h100(2))) {
    EXPECT_FALSE(p.meshes[call(g, "actor_gen")].overlaps(p.meshes[call(g, "actor_train")]));
    EXPECT_EQ(p.meshes[call(g, "critic_train")], p.meshes[call(g, "actor_train")]);
    EXPECT_EQ(p.meshes[call(g, "ref_inf")], p.meshes[call(g, "actor_train")]);
  }
  const auto tied = a->tied(g);
  ASSERT_EQ(tied.size(), 1u);
  EXPECT_EQ(tied[0].size(), 5u);  // actor train/inf, ref, critic inf/train: one Megatron allocation
  const auto p = a->placements(g, h100(2)).front();
  EXPECT_NE(a->strategy_problem(g, p, call(g, "actor_train"), 8, Strategy{4, 2, 1, 1, true}), "");
}

// GRPO with a verifier: the graph NeMo-RL runs.
AlgorithmConfig grpo_7b(int64_t staleness = 0) {
  AlgorithmConfig a = ppo_7b(staleness);
  a.algorithm = Algorithm::kGrpo;
  a.batch.samples_per_prompt = 8;
  a.reward_model = false;
  return a;
}

TEST(EngineRules, NemoRlColocatesGenerationOrSplitsWholeNodesAndRunsLogProbsInThePolicyLayout) {
  const auto n = make_engine("nemo-rl");
  const DataflowGraph g = build_graph(grpo_7b());
  n->check_graph(g, h100(2));
  const auto placements = n->placements(g, h100(2));
  ASSERT_FALSE(placements.empty());
  EXPECT_EQ(placements[0].meshes[call(g, "actor_gen")], (DeviceMesh{0, 16}));  // colocated, the default
  std::set<std::string> backends;
  for (const auto& q : placements) {
    backends.insert(q.options["backend"].get<std::string>());
    const DeviceMesh gen = q.meshes[call(g, "actor_gen")];
    const DeviceMesh train = q.meshes[call(g, "actor_train")];
    if (gen == train) continue;  // colocated
    EXPECT_FALSE(gen.overlaps(train));
    EXPECT_EQ(gen.size % 8, 0);  // across nodes, generation takes whole nodes (grpo.py)
    EXPECT_EQ(gen.size + train.size, 16);
  }
  EXPECT_EQ(backends, (std::set<std::string>{"megatron", "dtensor"}));
  // On one node, any split of its GPUs.
  bool part_of_node = false;
  for (const auto& p : n->placements(g, h100(1))) part_of_node |= p.meshes[call(g, "actor_gen")].size < 8;
  EXPECT_TRUE(part_of_node);
  // Asynchronous GRPO: generation apart only.
  const DataflowGraph stale = build_graph(grpo_7b(1));
  for (const auto& p : n->placements(stale, h100(2)))
    EXPECT_FALSE(p.meshes[call(stale, "actor_gen")].overlaps(p.meshes[call(stale, "actor_train")]));
  const auto tied = n->tied(g);
  ASSERT_EQ(tied.size(), 1u);
  EXPECT_EQ(tied[0], (std::vector<std::string>{"actor_train", "actor_inf", "ref_inf"}));
  const auto& p = placements[0];
  EXPECT_EQ(n->strategy_problem(g, p, call(g, "actor_gen"), 16, Strategy{8, 2, 1, 1}), "");
  EXPECT_EQ(n->strategy_problem(g, p, call(g, "actor_gen"), 16, Strategy{8, 2, 1, 4}), "");
  EXPECT_NE(n->strategy_problem(g, p, call(g, "actor_gen"), 16, Strategy{4, 2, 2, 2}), "");  // vLLM pp
  EXPECT_EQ(n->strategy_problem(g, p, call(g, "actor_train"), 16, Strategy{2, 2, 4, 4, true}), "");
  EXPECT_NE(n->strategy_problem(g, p, call(g, "actor_train"), 12, Strategy{1, 4, 3, 4}), "");  // 32 layers
  // DTensor: FSDP2 over dp (the optimizer state always sharded), tensor parallelism, no pipeline.
  const auto fsdp = std::find_if(placements.begin(), placements.end(),
                                 [](const auto& q) { return q.options["backend"] == "dtensor"; });
  ASSERT_NE(fsdp, placements.end());
  EXPECT_EQ(fsdp->options["zero_stage"], 3);
  EXPECT_EQ(n->strategy_problem(g, *fsdp, call(g, "actor_train"), 16, Strategy{8, 2, 1, 4, true}), "");
  EXPECT_NE(n->strategy_problem(g, *fsdp, call(g, "actor_train"), 16, Strategy{8, 2, 1, 4, false}), "");
  EXPECT_NE(n->strategy_problem(g, *fsdp, call(g, "actor_train"), 16, Strategy{2, 2, 4, 4, true}), "");
  // A mixture of experts trains on Megatron only.
  for (const auto& q : n->placements(build_graph(testing::qwen3_moe_grpo()), h100(4)))
    EXPECT_EQ(q.options["backend"], "megatron");
}

TEST(EngineRules, NemoRlRefusesWhatItsGrpoDoesNotRunNamingTheField) {
  const auto n = make_engine("nemo-rl");
  auto refused = [&](const AlgorithmConfig& a, const std::string& field) {
    try {
      n->check_graph(build_graph(a), h100(2));
      ADD_FAILURE() << "no error for " << field;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  AlgorithmConfig ppo = ppo_7b();
  ppo.reward_model = false;
  refused(ppo, "algorithm");
  AlgorithmConfig rm = grpo_7b();
  rm.reward_model = true;
  refused(rm, "reward.kind");
  AlgorithmConfig epochs = grpo_7b();
  epochs.batch.epochs = 2;
  refused(epochs, "batch.epochs");
  AlgorithmConfig ref = grpo_7b();
  ref.models[Role::kRef] = resolve_model_spec("llama2-13b", "models.ref");
  refused(ref, "models.ref");
}

TEST(EngineRules, CoverClusterUsesEveryDeviceOnceInEveryOrder) {
  const Cluster c = h100(2);
  const auto covers = engines::cover_cluster(c, 3);
  ASSERT_FALSE(covers.empty());
  for (const auto& cover : covers) {
    ASSERT_EQ(cover.size(), 3u);
    std::vector<int> used(16, 0);
    for (const DeviceMesh& m : cover) {
      EXPECT_EQ(mesh_problem(m, c), "");
      for (int d = m.first; d < m.end(); ++d) ++used[size_t(d)];
    }
    for (int u : used) EXPECT_EQ(u, 1);
  }
  // {8, 4, 4} two ways, each in 3! orders.
  EXPECT_EQ(covers.size(), 12u);
}

TEST(EngineRules, CanRunRefusesAPlanOutsideTheRules) {
  const auto verl = make_engine("verl");
  const DataflowGraph g = build_graph(ppo_7b());
  const Cluster c = h100(2);
  ExecutionPlan plan;
  for (const auto& m : g.mfcs)
    plan.assignments.push_back(
        MfcAssignment{m.name, DeviceMesh{0, 16},
                      m.kind() == MfcKind::kGenerate ? Strategy{8, 2, 1, 1} : Strategy{4, 4, 1, 1}});
  EXPECT_EQ(engines::can_run(*verl, g, c, plan), "");
  plan.assignments[call(g, "ref_inf")].strategy = Strategy{8, 2, 1, 1};  // not the actor's layout
  EXPECT_NE(engines::can_run(*verl, g, c, plan), "");
  plan.assignments[call(g, "ref_inf")].strategy = Strategy{4, 4, 1, 1};
  plan.assignments[call(g, "actor_gen")].mesh = DeviceMesh{0, 8};  // not one pool
  plan.assignments[call(g, "actor_gen")].strategy = Strategy{4, 2, 1, 1};
  EXPECT_NE(engines::can_run(*verl, g, c, plan), "");
}

}  // namespace
}  // namespace realign
