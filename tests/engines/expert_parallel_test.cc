// Expert parallelism in the engines' plans, on the shipped mixture-of-experts example (GRPO, Qwen3-30B-A3B,
// 4 x 8 H100): each engine's ep rules one by one, and the searched plan against them: veRL and AReaL train
// with ep > 1 where it beats ep 1, their configs carry the plan's ep (read back from the written text),
// OpenRLHF keeps ep 1 everywhere, and every plan fits and passes can_run.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "engines/engine_fixtures.h"
#include "engines/expert_rules.h"
#include "search/mcmc.h"

namespace realign {
namespace {

using engines::make_engine;
using engines::Placement;
using testing::h100;

DataflowGraph moe_example() { return build_graph(testing::qwen3_moe_grpo()); }

size_t call(const DataflowGraph& g, const std::string& name) { return size_t(g.mfc_index(name)); }

Strategy with_ep(Strategy s, int ep) {
  s.ep = ep;
  return s;
}

// key -> value as a launch script writes them ("  key=value \" lines) or a YAML writes "key: value".
std::map<std::string, std::string> script_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (line.rfind("  ", 0) != 0 || eq == std::string::npos) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.compare(value.size() - 2, 2, " \\") == 0) value.resize(value.size() - 2);
    out[line.substr(2, eq - 2)] = value;
  }
  return out;
}

TEST(EngineExpertParallel, VerlRolloutEpIsOneVllmServerAndMegatronFoldsOverDpTimesTp) {
  const auto verl = make_engine("verl");
  const DataflowGraph g = moe_example();
  const auto p = verl->placements(g, h100(4)).at(0);
  const size_t gen = call(g, "actor_gen"), train = call(g, "actor_train");
  // vLLM: expert_parallel_size = tp x data_parallel_size, so ep a multiple of tp ...
  EXPECT_EQ(verl->strategy_problem(g, p, gen, 32, with_ep(Strategy{16, 2, 1, 1}, 8)), "");
  EXPECT_NE(verl->strategy_problem(g, p, gen, 32, with_ep(Strategy{4, 8, 1, 1}, 4)), "");
  // ... and a server inside a node or of whole nodes (8 GPUs each here).
  EXPECT_EQ(engines::vllm_ep_problem(g.model(Role::kActor).spec, with_ep(Strategy{32, 1, 1, 1}, 16), 8), "");
  EXPECT_EQ(engines::vllm_ep_problem(g.model(Role::kActor).spec, with_ep(Strategy{24, 1, 1, 1}, 2), 6), "");
  EXPECT_NE(engines::vllm_ep_problem(g.model(Role::kActor).spec, with_ep(Strategy{24, 1, 1, 1}, 4), 6), "");
  // A server's tp over whole nodes: without expert parallelism veRL runs it (replica.py), with it veRL
  // asserts that tp divides a node (vllm_async_server.py).
  EXPECT_EQ(verl->strategy_problem(g, p, gen, 32, Strategy{2, 16, 1, 1}), "");
  EXPECT_NE(verl->strategy_problem(g, p, gen, 32, with_ep(Strategy{2, 16, 1, 1}, 32)), "");
  // Megatron: ep divides the 128 experts and dp x tp of a stage, ep below tp included (etp 1).
  EXPECT_EQ(verl->strategy_problem(g, p, train, 32, with_ep(Strategy{8, 2, 2, 4}, 16)), "");
  EXPECT_EQ(verl->strategy_problem(g, p, train, 32, with_ep(Strategy{4, 4, 2, 4}, 2)), "");
  EXPECT_NE(verl->strategy_problem(g, p, train, 32, with_ep(Strategy{4, 4, 2, 4}, 32)), "");
  EXPECT_EQ(engines::megatron_expert_tp(with_ep(Strategy{8, 4, 1, 1}, 8)), 1);
  EXPECT_EQ(engines::megatron_expert_tp(Strategy{8, 4, 1, 1}), 4);
}

TEST(EngineExpertParallel, OpenRlhfHasNoExpertParallelism) {
  const auto openrlhf = make_engine("openrlhf");
  const DataflowGraph g = moe_example();
  for (const auto& p : openrlhf->placements(g, h100(4))) {
    const int train = p.meshes[call(g, "actor_train")].size;
    Strategy s{train, 1, 1, 4};
    s.zero1 = true;
    s.recompute = p.options.value("gradient_checkpointing", false);
    EXPECT_EQ(openrlhf->strategy_problem(g, p, call(g, "actor_train"), train, s), "") << p.name;
    EXPECT_NE(openrlhf->strategy_problem(g, p, call(g, "actor_train"), train, with_ep(s, 8)), "") << p.name;
    const int gen = p.meshes[call(g, "actor_gen")].size;
    if (2048 % gen != 0) continue;  // the batch does not split over that many engines anyway
    EXPECT_EQ(openrlhf->strategy_problem(g, p, call(g, "actor_gen"), gen, Strategy{gen, 1, 1, 1}), "")
        << p.name;
    EXPECT_NE(openrlhf->strategy_problem(g, p, call(g, "actor_gen"), gen, with_ep(Strategy{gen, 1, 1, 1}, 8)),
              "")
        << p.name;
  }
}

TEST(EngineExpertParallel, ArealSpreadsExpertsInMegatronOnlyAndTiedCallsShareEp) {
  const auto areal = make_engine("areal");
  const DataflowGraph g = moe_example();
  const Cluster c = h100(4);
  // The placement with 16 GPUs for generation and 16 for training.
  Placement p;
  for (const auto& q : areal->placements(g, c))
    if (q.meshes[call(g, "actor_gen")].size == 16) p = q;
  ASSERT_FALSE(p.meshes.empty());
  const int gen = p.meshes[call(g, "actor_gen")].size, train = p.meshes[call(g, "actor_train")].size;
  EXPECT_EQ(areal->strategy_problem(g, p, call(g, "actor_gen"), gen, Strategy{gen, 1, 1, 1}), "");
  EXPECT_NE(areal->strategy_problem(g, p, call(g, "actor_gen"), gen, with_ep(Strategy{gen, 1, 1, 1}, 8)), "");
  EXPECT_EQ(
      areal->strategy_problem(g, p, call(g, "actor_train"), train, with_ep(Strategy{train, 1, 1, 4}, 8)), "");
  // A plan whose reference spreads its experts differently from the actor's is not one AReaL runs.
  ExecutionPlan plan;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const bool generate = g.mfcs[i].kind() == MfcKind::kGenerate;
    plan.assignments.push_back({g.mfcs[i].name, p.meshes[i],
                                generate ? Strategy{gen, 1, 1, 1} : with_ep(Strategy{train, 1, 1, 4}, 8)});
  }
  EXPECT_EQ(engines::can_run(*areal, g, c, plan), "");
  plan.assignments[call(g, "ref_inf")].strategy.ep = 4;
  EXPECT_NE(engines::can_run(*areal, g, c, plan), "");
}

// The searched plan of each engine on the example: runnable, fitting, with the ep its rules allow, and that
// ep written in the engine's own words.
TEST(EngineExpertParallel, SearchedPlansOnTheMoeExampleUseEpWhereTheEngineHasIt) {
  const DataflowGraph g = moe_example();
  const Cluster c = h100(4);
  for (const auto& name : engines::engine_names()) {
    SCOPED_TRACE(name);
    const auto engine = make_engine(name);
    const AlgorithmConfig a = testing::qwen3_moe_grpo();
    const testing::EnginePlan r = testing::search(*engine, g, c, 2000);
    ASSERT_TRUE(r.search.plan);
    const ExecutionPlan& plan = *r.search.plan;
    EXPECT_EQ(engines::can_run(*engine, g, c, plan), "");
    EXPECT_TRUE(r.estimate.fits);  // after the engine's own savings (ZeRO-3), as the report counts it
    const Strategy& gen = plan.assignments[call(g, "actor_gen")].strategy;
    const Strategy& train = plan.assignments[call(g, "actor_train")].strategy;
    for (const auto& x : plan.assignments) {
      if (x.mfc == "actor_gen") continue;
      EXPECT_EQ(x.strategy.ep, train.ep) << x.mfc;  // one worker, one layout
    }
    if (name == "openrlhf") {
      for (const auto& x : plan.assignments) EXPECT_EQ(x.strategy.ep, 1) << x.mfc;
      continue;
    }
    if (name == "areal") {
      EXPECT_EQ(gen.ep, 1);
    }
    // Training with ep > 1, and faster (by the search's objective) than the same plan with ep 1.
    EXPECT_GT(train.ep, 1);
    ExecutionPlan dense_experts = plan;
    for (auto& x : dense_experts.assignments)
      if (x.mfc != "actor_gen") x.strategy.ep = 1;
    Simulator sim(g, c, builtin_profile(c.device));
    engines::EngineEvaluator ev(sim, engine->pricing(g), true);
    ev.set_placement_options(r.search.placement.options);
    EXPECT_LT(search_objective(ev.evaluate(plan)), search_objective(ev.evaluate(dense_experts)));

    engines::WriteInput in;

    in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
    in.graph = &g;
    in.cluster = &c;
    in.batch = a.batch;
    in.placement = r.search.placement;
    const auto files = engine->launch_files(in, plan);
    ASSERT_EQ(files.size(), 1u);
    if (name == "nemo-rl") {
      auto v = script_values(files[0].text);
      EXPECT_EQ(v["policy.megatron_cfg.expert_model_parallel_size"], std::to_string(train.ep));
      EXPECT_EQ(v["policy.megatron_cfg.expert_tensor_parallel_size"], "1");
      EXPECT_EQ(v["policy.megatron_cfg.sequence_parallel"], train.tp > 1 ? "true" : "false");
      EXPECT_EQ(v["policy.generation.vllm_cfg.expert_parallel_size"], std::to_string(gen.ep));
      EXPECT_TRUE(gen.ep == 1 || gen.ep == gen.tp) << gen.ep;
    } else if (name == "verl") {
      auto v = script_values(files[0].text);
      EXPECT_EQ(v["actor_rollout_ref.actor.megatron.expert_model_parallel_size"], std::to_string(train.ep));
      EXPECT_EQ(v["actor_rollout_ref.actor.megatron.expert_tensor_parallel_size"], "1");
      EXPECT_EQ(v["actor_rollout_ref.ref.megatron.expert_model_parallel_size"], std::to_string(train.ep));
      if (gen.ep > 1) {
        EXPECT_EQ(v["actor_rollout_ref.rollout.expert_parallel_size"], std::to_string(gen.ep));
        EXPECT_EQ(std::stoi(v["actor_rollout_ref.rollout.data_parallel_size"]) *
                      std::stoi(v["actor_rollout_ref.rollout.tensor_model_parallel_size"]),
                  gen.ep);
      } else {
        EXPECT_EQ(v.count("actor_rollout_ref.rollout.expert_parallel_size"), 0u);
      }
    } else {
      const std::string& yaml = files[0].text;
      const size_t at = yaml.find("allocation_mode: \"");
      ASSERT_NE(at, std::string::npos) << yaml;
      const std::string alloc = yaml.substr(at + 18, yaml.find('"', at + 18) - at - 18);
      int d = 0, p = 0, t = 0, e = 0;
      ASSERT_EQ(
          std::sscanf(alloc.substr(alloc.find("megatron:")).c_str(), "megatron:d%dp%dt%de%d", &d, &p, &t, &e),
          4)
          << alloc;
      EXPECT_EQ(e, train.ep);
      EXPECT_EQ(d * t * p, plan.assignments[call(g, "actor_train")].mesh.size);
      EXPECT_EQ(alloc.substr(0, alloc.find('+')).find('e'), std::string::npos) << alloc;  // no e for SGLang
    }
  }
}

}  // namespace
}  // namespace realign
