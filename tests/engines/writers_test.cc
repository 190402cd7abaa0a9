// The engines' config writers against golden files checked by hand against the engines' docs (each key is
// in the config tree, argument parser or example config cited in docs/engines.md). Set
// REALIGN_UPDATE_GOLDEN=1 to rewrite them after a deliberate change, then check them again by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "engines/engine.h"
#include "engines/engine_fixtures.h"
#include "engines/pricing.h"
#include "engines/write_helpers.h"

namespace realign {
namespace {

using testing::h100;
using testing::ppo_7b;

std::string golden_path(const std::string& name) {
  return std::string(REALIGN_SOURCE_DIR) + "/tests/engines/golden/" + name;
}

void expect_golden(const std::string& name, const std::string& text) {
  const std::string path = golden_path(name);
  if (std::getenv("REALIGN_UPDATE_GOLDEN")) std::ofstream(path) << text;
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(text, ss.str()) << name;
}

// Every call of `g` on `mesh` with `s`, generation on `gen_mesh` with `gen`.
ExecutionPlan uniform(const DataflowGraph& g, DeviceMesh gen_mesh, Strategy gen, DeviceMesh mesh,
                      Strategy s) {
  ExecutionPlan plan;
  for (const auto& m : g.mfcs) {
    if (m.kind() == MfcKind::kGenerate) {
      plan.assignments.push_back({m.name, gen_mesh, gen});
    } else {
      Strategy x = s;
      if (m.kind() != MfcKind::kTrain) x.zero1 = x.recompute = false;
      plan.assignments.push_back({m.name, mesh, x});
    }
  }
  return plan;
}

engines::WriteInput input(const DataflowGraph& g, const Cluster& c, const AlgorithmConfig& a, Json raw) {
  engines::WriteInput in;
  in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
  in.graph = &g;
  in.cluster = &c;
  in.batch = a.batch;
  in.raw_config = std::move(raw);
  return in;
}

TEST(EngineWriters, VerlHybridEngineLaunchScript) {
  const AlgorithmConfig a = ppo_7b();
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  ExecutionPlan plan = uniform(g, {0, 16}, Strategy{8, 2, 1, 1}, {0, 16}, Strategy{4, 4, 1, 4, true, false});
  plan.assignments[size_t(g.mfc_index("critic_train"))].strategy.recompute = true;
  plan.offload = {Role::kRef};
  const auto verl = engines::make_engine("verl");
  ASSERT_EQ(engines::can_run(*verl, g, c, plan), "");
  // A model given as a directory is written as its path; built-in shapes become placeholders.
  const auto in = input(g, c, a, Json::parse(R"({"models": {"actor": "/ckpt/llama2-7b-sft"}})"));
  const auto files = verl->launch_files(in, plan);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].executable);
  expect_golden("verl_7b_16xh100_launch.sh", files[0].text);
}

// veRL's default trainer: FSDP over the whole pool, gradient checkpointing per model, the reference's
// parameters offloaded by FSDP's own key.
TEST(EngineWriters, VerlFsdpPlacementWritesTheFsdpTrainer) {
  const AlgorithmConfig a = ppo_7b();
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  ExecutionPlan plan = uniform(g, {0, 16}, Strategy{8, 2, 1, 1}, {0, 16}, Strategy{16, 1, 1, 4, true, true});
  plan.assignments[size_t(g.mfc_index("critic_train"))].strategy.recompute = false;
  plan.offload = {Role::kRef};
  const auto verl = engines::make_engine("verl");
  engines::WriteInput in = input(g, c, a, Json::object());
  for (const auto& p : verl->placements(g, c))
    if (p.options["backend"] == "fsdp") in.placement = p;
  ASSERT_TRUE(in.placement);
  std::map<std::string, Json> v;
  for (const auto& e : verl->write_config(in, plan)) v[e.key] = e.value;
  for (const char* role : {"actor_rollout_ref.actor", "actor_rollout_ref.ref", "critic"})
    EXPECT_EQ(v[std::string(role) + ".strategy"], "fsdp") << role;
  EXPECT_EQ(v["reward.reward_model.rollout.name"], "vllm");  // v0.9.0 serves the reward model
  EXPECT_EQ(v["actor_rollout_ref.model.enable_gradient_checkpointing"], true);
  EXPECT_EQ(v["critic.model.enable_gradient_checkpointing"], false);
  EXPECT_EQ(v["actor_rollout_ref.ref.fsdp_config.param_offload"], true);
  for (const auto& [key, value] : v) EXPECT_EQ(key.find(".megatron."), std::string::npos) << key;
  const auto files = verl->launch_files(in, plan);
  EXPECT_NE(files[0].text.find("--config-name=ppo_trainer"), std::string::npos);
}

TEST(EngineWriters, OpenRlhfSeparateVllmLaunchScript) {
  const AlgorithmConfig a = ppo_7b();
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  const ExecutionPlan plan = testing::openrlhf_split(g, false);
  const auto o = engines::make_engine("openrlhf");
  ASSERT_EQ(engines::can_run(*o, g, c, plan), "");
  const auto files = o->launch_files(input(g, c, a, Json::object()), plan);
  ASSERT_EQ(files.size(), 1u);
  expect_golden("openrlhf_7b_16xh100_launch.sh", files[0].text);
  // A script's own workload settings, where realign's graph stands in for them, are what is written, under
  // the release's own names (v0.10's flat flags too).
  engines::WriteInput kept = input(g, c, a, Json::object());
  kept.workload = {{"--algo.advantage.estimator", "reinforce_baseline"}, {"--rollout.batch_size", 256}};
  for (const char* engine : {"openrlhf", "openrlhf@v0.10.1.post2"}) {
    std::map<std::string, Json> written;
    for (const auto& e : engines::make_engine(engine)->write_config(kept, plan)) written[e.key] = e.value;
    const bool flat = std::string(engine) != "openrlhf";
    EXPECT_EQ(written.at(flat ? "--advantage_estimator" : "--algo.advantage.estimator"),
              "reinforce_baseline");
    EXPECT_EQ(written.at(flat ? "--rollout_batch_size" : "--rollout.batch_size"), 256);
  }
}

TEST(EngineWriters, ArealAllocationModeAndYaml) {
  AlgorithmConfig a = ppo_7b(2);
  a.reward_model = false;
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  const ExecutionPlan plan =
      uniform(g, {0, 8}, Strategy{4, 2, 1, 1}, {8, 8}, Strategy{2, 2, 2, 4, false, true});
  const auto areal = engines::make_engine("areal");
  ASSERT_EQ(engines::can_run(*areal, g, c, plan), "");
  const auto in = input(g, c, a, Json::object());
  bool found = false;
  for (const auto& e : areal->write_config(in, plan))
    if (e.key == "allocation_mode") {
      EXPECT_EQ(e.value.get<std::string>(), "sglang:d4p1t2+megatron:d2p2t2");
      found = true;
    }
  EXPECT_TRUE(found);
  const auto files = areal->launch_files(in, plan);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, "config.yaml");
  expect_golden("areal_7b_16xh100_config.yaml", files[0].text);
  // FSDP training: data and tensor parallel, the optimizer state sharded with the weights.
  const ExecutionPlan fsdp =
      uniform(g, {0, 8}, Strategy{4, 2, 1, 1}, {8, 8}, Strategy{4, 2, 1, 4, true, true});
  engines::WriteInput with = in;
  for (const auto& p : areal->placements(g, c))
    if (p.options["backend"] == "fsdp" && p.meshes[0] == (DeviceMesh{0, 8})) with.placement = p;
  ASSERT_TRUE(with.placement);
  std::string written;
  for (const auto& e : areal->write_config(with, fsdp))
    if (e.key == "allocation_mode") written = e.value.get<std::string>();
  EXPECT_EQ(written, "sglang:d4p1t2+fsdp:d4p1t2");
}

// NeMo-RL's own recipe for Qwen3-30B-A3B on 4 x 8 H100 (NVIDIA-NeMo/RL
// examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n8g.yaml: vLLM tp 2 colocated, Megatron tp 1,
// pp 1, expert_model_parallel_size 8, train_micro_batch_size 1) written back as realign's NeMo-RL launch
// script: the keys it sets come out with the recipe's values.
TEST(EngineWriters, NemoRlWritesItsOwnQwen3MoeRecipeBack) {
  const AlgorithmConfig a = testing::qwen3_moe_grpo();
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(4);
  Strategy train{32, 1, 1, 16, true};  // 512 sequences per step over 32 ranks, one per micro-batch
  train.ep = 8;
  Strategy logprobs{32, 1, 1, 16};  // logprob_batch_size 4
  logprobs.ep = 8;
  ExecutionPlan plan = uniform(g, {0, 32}, Strategy{16, 2, 1, 1}, {0, 32}, train);
  plan.assignments[size_t(g.mfc_index("actor_inf"))].strategy = logprobs;
  plan.assignments[size_t(g.mfc_index("ref_inf"))].strategy = logprobs;
  const auto nemo = engines::make_engine("nemo-rl");
  ASSERT_EQ(engines::can_run(*nemo, g, c, plan), "");
  const auto files = nemo->launch_files(input(g, c, a, Json::object()), plan);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].executable);
  expect_golden("nemo_rl_qwen3_30b_a3b_32xh100_launch.sh", files[0].text);
  // NeMo-RL keeps the reference in host memory: priced offloaded whether the plan says so or not.
  Simulator sim(g, c, builtin_profile(c.device));
  engines::EngineEvaluator ev(sim, nemo->pricing(g), true);
  ExecutionPlan offloaded = plan;
  offloaded.offload = {Role::kRef};
  const engines::EngineEstimate as_given = ev.estimate(plan);
  EXPECT_EQ(as_given.iteration_time_s, ev.estimate(offloaded).iteration_time_s);
  EXPECT_GT(as_given.simulation.offload_bytes, 0);
  EXPECT_EQ(engines::EngineEvaluator(sim, engines::Pricing{}, true).estimate(plan).simulation.offload_bytes,
            0);
}

// Async GRPO: generation on its own whole node, with the switches async-grpo.md requires.
TEST(EngineWriters, NemoRlAsyncGrpoPutsGenerationApartWithItsRequiredSwitches) {
  AlgorithmConfig a = testing::ppo_7b(1);
  a.algorithm = Algorithm::kGrpo;
  a.batch.samples_per_prompt = 8;
  a.reward_model = false;
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  const ExecutionPlan plan = uniform(g, {0, 8}, Strategy{4, 2, 1, 1}, {8, 8}, Strategy{4, 2, 1, 8, true});
  const auto nemo = engines::make_engine("nemo-rl");
  ASSERT_EQ(engines::can_run(*nemo, g, c, plan), "");
  std::map<std::string, Json> v;
  for (const auto& e : nemo->write_config(input(g, c, a, Json::object()), plan)) v[e.key] = e.value;
  EXPECT_EQ(v["policy.generation.colocated.enabled"], false);
  EXPECT_EQ(v["policy.generation.colocated.resources.num_nodes"], 1);
  EXPECT_EQ(v["policy.generation.colocated.resources.gpus_per_node"], 8);
  EXPECT_EQ(v["policy.generation.vllm_cfg.async_engine"], true);
  EXPECT_EQ(v["loss_fn.use_importance_sampling_correction"], true);
  EXPECT_EQ(v["grpo.async_grpo.enabled"], true);
  EXPECT_EQ(v["grpo.async_grpo.max_trajectory_age_steps"], 1);
  EXPECT_EQ(v["policy.megatron_cfg.tensor_model_parallel_size"], 2);
  EXPECT_EQ(v["policy.train_global_batch_size"], 512 * 8 / 4);
  EXPECT_EQ(v["policy.train_micro_batch_size"], 1024 / 4 / 8);
  EXPECT_EQ(v.count("policy.megatron_cfg.expert_model_parallel_size"), 0u);  // a dense model
}

// NeMo-RL's default backend: DTensor (FSDP2 over dp, tensor parallelism), launched with the base config.
TEST(EngineWriters, NemoRlDtensorPlacementWritesTheDtensorConfig) {
  AlgorithmConfig a = testing::ppo_7b();
  a.algorithm = Algorithm::kGrpo;
  a.batch.samples_per_prompt = 8;
  a.reward_model = false;
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(1);
  const ExecutionPlan plan =
      uniform(g, {0, 8}, Strategy{4, 2, 1, 4}, {0, 8}, Strategy{4, 2, 1, 8, true, true});
  const auto nemo = engines::make_engine("nemo-rl");
  engines::WriteInput in = input(g, c, a, Json::object());
  for (const auto& p : nemo->placements(g, c))
    if (p.options["backend"] == "dtensor" && p.meshes[0] == (DeviceMesh{0, 8})) in.placement = p;
  ASSERT_TRUE(in.placement);
  std::map<std::string, Json> v;
  for (const auto& e : nemo->write_config(in, plan)) v[e.key] = e.value;
  EXPECT_EQ(v["policy.dtensor_cfg.enabled"], true);
  EXPECT_EQ(v["policy.megatron_cfg.enabled"], false);
  EXPECT_EQ(v["policy.dtensor_cfg.tensor_parallel_size"], 2);
  EXPECT_EQ(v["policy.dtensor_cfg.activation_checkpointing"], true);
  EXPECT_EQ(v.count("policy.megatron_cfg.tensor_model_parallel_size"), 0u);
  const auto files = nemo->launch_files(in, plan);
  EXPECT_NE(files[0].text.find("--config examples/configs/grpo_math_1B.yaml"), std::string::npos);
  // Without the searched placement the writer takes the first that runs the plan: Megatron's.
  in.placement.reset();
  v.clear();
  for (const auto& e : nemo->write_config(in, plan)) v[e.key] = e.value;
  EXPECT_EQ(v["policy.megatron_cfg.enabled"], true);
}

TEST(EngineWriters, PlaceholdersAreRequiredByTheScriptAndQuotedForTheShell) {
  const std::vector<engines::ConfigEntry> entries = {
      {"a.path", "${ACTOR_MODEL_PATH}"}, {"b", 3}, {"c", "x\"y"}};
  EXPECT_EQ(engines::placeholders(entries), std::vector<std::string>{"ACTOR_MODEL_PATH"});
  EXPECT_EQ(engines::shell_value(Json("x\"y")), "\"x\\\"y\"");
  EXPECT_EQ(engines::shell_value(Json(3)), "3");
  const std::string script = engines::launch_script(*engines::make_engine("verl"), "t", entries, "run", {"a=1"});
  EXPECT_NE(script.find(": \"${ACTOR_MODEL_PATH:?"), std::string::npos) << script;
  EXPECT_NE(script.find("for veRL v0.9.0 (verl-project/verl 483b8a0, 2026-08-14)"), std::string::npos) << script;
  EXPECT_EQ(engines::nested_yaml({{"a.b", 1}, {"a.c", "x"}, {"d", true}}),
            "a:\n  b: 1\n  c: \"x\"\nd: true\n");
}

}  // namespace
}  // namespace realign
