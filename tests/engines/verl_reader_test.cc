// veRL launch scripts read back into a realign workload and plan: what realign's own writer writes reads back
// to the plan it was written from (Megatron and FSDP), a user's script reads to the layout it runs, and what
// realign cannot price is refused naming the key.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"
#include "engines/script_reader.h"
#include "search/candidates.h"
#include "testing/temp_dir.h"

namespace realign {
namespace {

using testing::h100;

using Read = testing::ReadScript;

Read read_script(const std::string& script) { return testing::read_script("verl", script); }

// What veRL's writer writes for `plan` (models as checkpoint directories named like their shapes), read back.
Read round_trip(const AlgorithmConfig& a, const Cluster& c, const ExecutionPlan& plan,
                const std::string& engine = "verl") {
  const DataflowGraph g = build_graph(a);
  const auto verl = engines::make_engine(engine);
  EXPECT_EQ(engines::can_run(*verl, g, c, plan), "");
  engines::WriteInput in;
  in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
  in.graph = &g;
  in.cluster = &c;
  in.batch = a.batch;
  in.raw_config = Json::parse(
      R"({"models": {"actor": "/ckpt/llama2-7b", "critic": "/ckpt/critic/llama2-7b",
                     "reward": "/ckpt/rm/llama2-7b"}})");
  const auto files = verl->launch_files(in, plan);
  return read_script(files.at(0).text);
}

void expect_same_layout(const ExecutionPlan& read, const ExecutionPlan& written) {
  ASSERT_EQ(read.assignments.size(), written.assignments.size());
  for (size_t i = 0; i < read.assignments.size(); ++i) {
    SCOPED_TRACE(written.assignments[i].mfc);
    EXPECT_EQ(read.assignments[i].mfc, written.assignments[i].mfc);
    // The script gives each pool's size; which GPUs Ray gives which pool is not in it.
    EXPECT_EQ(read.assignments[i].mesh.size, written.assignments[i].mesh.size);
    // Generation waves are vLLM's own scheduling, not a setting the script carries (import adds them where
    // the KV cache needs them).
    Strategy expected = written.assignments[i].strategy;
    if (read.assignments[i].mfc == "actor_gen") expected.micro_batches = 1;
    EXPECT_EQ(to_string(read.assignments[i].strategy), to_string(expected));
  }
  EXPECT_EQ(read.offload, written.offload);
}

// Every call of `g` on all `world` GPUs: generation with `gen`, the others with `s` (a train call's
// switches on train calls only).
ExecutionPlan hybrid(const DataflowGraph& g, int world, Strategy gen, Strategy s) {
  ExecutionPlan plan;
  for (const auto& m : g.mfcs) {
    Strategy x = m.kind() == MfcKind::kGenerate ? gen : s;
    if (m.kind() == MfcKind::kInference) x.zero1 = x.recompute = false;
    plan.assignments.push_back({m.name, DeviceMesh{0, world}, x});
  }
  return plan;
}

TEST(VerlReader, MegatronScriptWrittenByRealignReadsBackToItsPlan) {
  const AlgorithmConfig a = testing::ppo_7b();
  const DataflowGraph g = build_graph(a);
  ExecutionPlan plan = hybrid(g, 16, Strategy{8, 2, 1, 1}, Strategy{4, 4, 1, 4, true, false});
  plan.assignments[size_t(g.mfc_index("critic_train"))].strategy.recompute = true;
  plan.assignments[size_t(g.mfc_index("ref_inf"))].strategy.micro_batches = 2;
  // veRL's critic computes values in its training micro-batches (4 mini-batches of 4).
  plan.assignments[size_t(g.mfc_index("critic_inf"))].strategy.micro_batches = 16;
  plan.offload = {Role::kRef};
  const Read r = round_trip(a, h100(2), plan);
  EXPECT_EQ(r.run.config["algorithm"], "ppo");
  EXPECT_EQ(r.run.config["models"]["actor"], "llama2-7b");
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 2, "devices_per_node": 8})"));
  EXPECT_EQ(r.run.config["batch"]["prompts"], a.batch.prompts);
  EXPECT_EQ(r.run.config["batch"]["mini_batches"], a.batch.mini_batches);
  EXPECT_EQ(r.run.config["batch"]["gen_len"], a.batch.gen_len);
  EXPECT_EQ(r.run.config["reward"]["kind"], "model");
  expect_same_layout(r.plan, plan);
}

TEST(VerlReader, FsdpScriptWrittenByRealignReadsBackToItsPlan) {
  const AlgorithmConfig a = testing::ppo_7b();
  const DataflowGraph g = build_graph(a);
  ExecutionPlan plan = hybrid(g, 16, Strategy{16, 1, 1, 1}, Strategy{16, 1, 1, 2, true, true});
  plan.assignments[size_t(g.mfc_index("critic_train"))].strategy.recompute = false;
  plan.assignments[size_t(g.mfc_index("critic_inf"))].strategy.micro_batches = 8;  // its training size
  plan.offload = {Role::kRef, Role::kReward};
  // The reward model's FSDP offload key is v0.7.0's (from v0.7.1 its server sleeps between calls, no key).
  const Read r = round_trip(a, h100(2), plan, "verl@v0.7.0");
  expect_same_layout(r.plan, plan);
  // Written with reward_model.use_reward_loop=False (v0.7.0 serves the reward model by its loop unless
  // told), the worker it prices is what the script says, not a default the reader notes.
  for (const std::string& note : r.run.notes) EXPECT_EQ(note.find("use_reward_loop"), std::string::npos) << note;
}

TEST(VerlReader, FullyAsyncScriptWrittenByRealignReadsBackToItsPlan) {
  AlgorithmConfig a = testing::algorithm_from_yaml(R"(
algorithm: grpo
models: {actor: llama2-7b}
batch: {prompts: 128, samples_per_prompt: 8, prompt_len: 512, gen_len: 1024, mini_batches: 4}
)");
  a.staleness = 2;
  a.reward_model = false;
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  const auto verl = engines::make_engine("verl");
  const auto searched = testing::search(*verl, g, c);
  ASSERT_TRUE(searched.search.plan.has_value());
  const ExecutionPlan& plan = *searched.search.plan;
  ASSERT_LT(plan.assignments[size_t(g.mfc_index("actor_gen"))].mesh.size, 16);  // rollout GPUs of its own
  const Read r = round_trip(a, c, plan);
  EXPECT_EQ(r.run.config["train"]["staleness"], 2);
  EXPECT_EQ(r.run.config["batch"]["prompts"], 128);
  EXPECT_EQ(r.run.config["batch"]["mini_batches"], 4);
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 2, "devices_per_node": 8})"));
  expect_same_layout(r.plan, plan);
  // With partial rollouts and a share of the second batch ahead: staleness_threshold 1.5, read back so.
  a.partial_rollout = true;
  a.batching = Batching::kContinuous;
  a.staleness_share = 0.5;
  const Read shared = round_trip(a, c, plan);
  EXPECT_EQ(shared.run.config["train"]["staleness"], 2);
  EXPECT_EQ(shared.run.config["train"]["staleness_share"], 0.5);
  EXPECT_EQ(shared.run.config["train"]["partial_rollout"], true);
}

TEST(VerlReader, UsersScriptReadsToTheLayoutItRuns) {
  const Read r = read_script(R"(
TP=4
python3 -m verl.trainer.main_ppo --config-name='ppo_megatron_trainer.yaml' \
    algorithm.adv_estimator=rloo \
    data.train_batch_size=256 data.max_prompt_length=1024 data.max_response_length=2048 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.use_dynamic_bsz=True \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=12288 \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP \
    actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size=2 \
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 actor_rollout_ref.rollout.n=4 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16 \
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size=$TP \
    actor_rollout_ref.ref.megatron.param_offload=True \
    trainer.n_gpus_per_node=8 trainer.nnodes=2
)");
  EXPECT_EQ(r.run.config["algorithm"], "grpo");
  EXPECT_EQ(r.run.config["models"]["actor"], "qwen2.5-7b");
  EXPECT_EQ(r.run.config["reward"]["kind"], "verifier");
  EXPECT_EQ(r.run.config["batch"]["samples_per_prompt"], 4);
  EXPECT_EQ(r.run.config["batch"]["mini_batches"], 4);
  auto at = [&](const std::string& call) { return r.plan.assignments[size_t(r.graph.mfc_index(call))]; };
  EXPECT_EQ(to_string(at("actor_gen").strategy), to_string(Strategy{8, 2, 1, 1}));
  // 256 sequences of 3,072 tokens per optimizer step over dp 4: 64 per rank, 4 in each micro-batch of the
  // 12,288-token budget. The log-prob calls batch dynamically too (veRL's default follows the actor's
  // switch), within the same budget, so their own micro-batch size is not what runs.
  EXPECT_EQ(to_string(at("actor_train").strategy), to_string(Strategy{4, 4, 1, 16, true, true}));
  EXPECT_EQ(to_string(at("actor_inf").strategy), to_string(Strategy{4, 4, 1, 64}));
  EXPECT_EQ(at("actor_gen").mesh, (DeviceMesh{0, 16}));
  // No KL term (use_kl_loss and use_kl_in_reward left off): veRL builds no reference, so its offload is moot.
  EXPECT_EQ(r.graph.mfc_index("ref_inf"), -1);
  EXPECT_TRUE(r.plan.offload.empty());
  // What is priced otherwise is said, naming the key.
  std::string notes;
  for (const auto& n : r.notes) notes += n + "\n";
  EXPECT_NE(notes.find("algorithm.adv_estimator: rloo priced as GRPO"), std::string::npos) << notes;
  EXPECT_NE(notes.find("virtual_pipeline_model_parallel_size"), std::string::npos) << notes;
  EXPECT_NE(notes.find("ppo_max_token_len_per_gpu: dynamic batching"), std::string::npos) << notes;
  EXPECT_NE(notes.find("use_kl_loss: no KL term"), std::string::npos) << notes;
}

// v0.7.0 and v0.8's development line keep the reward model under reward_model.* and serve it by the reward
// loop (reward_model.use_reward_loop defaults to true; its server's sizes under reward_model.rollout.*), as
// veRL's examples/ppo_trainer/run_deepseek_full_hh_rlhf.sh (volcengine/verl b178a3c) runs it: no worker
// micro-batch size is needed (refused 'reward_model.micro_batch_size_per_gpu: not set' before). Left out
// with no server key, the worker is read and the default noted.
TEST(VerlReader, RewardLoopUnderTheRewardModelKeysIsTheServedRewardModel) {
  const std::string base = R"(python3 -m verl.trainer.main_ppo algorithm.adv_estimator=gae \
    data.train_batch_size=256 data.max_prompt_length=512 data.max_response_length=512 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \
    critic.model.path=Qwen/Qwen2.5-7B-Instruct critic.ppo_micro_batch_size_per_gpu=4 \
    reward_model.enable=True reward_model.model.path=Qwen/Qwen2.5-7B-Instruct \
    trainer.n_gpus_per_node=8 trainer.nnodes=1 )";
  for (const std::string& loop : {std::string("reward_model.use_reward_loop=True"),
                                  std::string("reward_model.rollout.tensor_model_parallel_size=4")}) {
    SCOPED_TRACE(loop);
    const Read r = read_script(base + loop + "\n");
    EXPECT_EQ(r.run.config["reward"]["kind"], "model");
    EXPECT_FALSE(testing::noted(r, "reward_model.use_reward_loop"));
  }
  // The server's token budget, spelled as the script spells it.
  EXPECT_TRUE(testing::noted(read_script(base + "reward_model.use_reward_loop=True\n"),
                             "reward_model.rollout.max_num_batched_tokens"));
  const Read worker = read_script(base + "reward_model.micro_batch_size_per_gpu=4\n");
  EXPECT_TRUE(testing::noted(worker, "reward_model.use_reward_loop"));
  testing::expect_refused("verl", base, {{"reward_model.use_reward_loop=False\n",
                                          "reward_model.micro_batch_size_per_gpu"}});
}

// fully_async launched as its README does, from veRL's root: the recipe's own config (its defaults for the
// two pools and the staleness) is read where the line names it, the line's overrides over it.
TEST(VerlReader, FullyAsyncRecipeIsReadFromItsConfig) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("recipe/fully_async_policy/config"));
  testing::write_file(dir.file("recipe/fully_async_policy/config/fully_async_ppo_trainer.yaml"), R"(hydra:
  searchpath:
    - pkg://verl.trainer.config
defaults:
  - ppo_trainer
  - _self_
async_training:
  staleness_threshold: 0.5
  trigger_parameter_sync_step: 4
  require_batches: 1
  partial_rollout: True
rollout:
  nnodes: 1
  n_gpus_per_node: 8
)");
  const std::string line =
      "python3 -m recipe.fully_async_policy.fully_async_main --config-path=config "
      "--config-name='fully_async_ppo_trainer.yaml' algorithm.adv_estimator=grpo "
      "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B actor_rollout_ref.actor.ppo_mini_batch_size=32 "
      "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 actor_rollout_ref.rollout.n=8 "
      "trainer.nnodes=1 trainer.n_gpus_per_node=4 rollout.n_gpus_per_node=4\n";
  const Read r = testing::read_script("verl", line, dir.file("run.sh"));
  EXPECT_EQ(r.run.config["train"]["staleness"], 1);  // the recipe's 0.5: half a batch ahead, one update old
  EXPECT_EQ(r.run.config["train"]["staleness_share"], 0.5);
  EXPECT_EQ(r.graph.staleness, 1);
  EXPECT_EQ(r.graph.staleness_share, 0.5);
  EXPECT_EQ(r.run.config["batch"]["prompts"], 4 * 32);  // its 4 updates a sync
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 2, "devices_per_node": 4})"));  // a node each
  EXPECT_EQ(r.plan.assignments[size_t(r.graph.mfc_index("actor_gen"))].mesh.size, 4);
  EXPECT_EQ(r.run.config["train"]["partial_rollout"], true);  // the recipe's True, priced
  EXPECT_TRUE(testing::noted(r, "--config-name"));            // "read <file> (on ppo_trainer's ...)"
  // 1.5: one batch and half the next ahead; 2: whole iterations; without partial rollouts, rounded up.
  const Read one_and_a_half =
      testing::read_script("verl", line.substr(0, line.size() - 1) + " async_training.staleness_threshold=1.5\n",
                           dir.file("run.sh"));
  EXPECT_EQ(one_and_a_half.graph.staleness, 2);
  EXPECT_EQ(one_and_a_half.graph.staleness_share, 0.5);
  const Read two = testing::read_script(
      "verl", line.substr(0, line.size() - 1) + " async_training.staleness_threshold=2\n", dir.file("run.sh"));
  EXPECT_EQ(two.graph.staleness, 2);
  EXPECT_EQ(two.graph.staleness_share, 1.0);
  const Read whole = testing::read_script(
      "verl", line.substr(0, line.size() - 1) + " async_training.partial_rollout=False\n", dir.file("run.sh"));
  EXPECT_EQ(whole.graph.staleness, 1);
  EXPECT_EQ(whole.graph.staleness_share, 1.0);
  EXPECT_TRUE(testing::noted(whole, "async_training.staleness_threshold"));
  // Without its config at hand the line alone is priced, and it leaves the staleness unset.
  try {
    testing::read_script("verl", line, "elsewhere/run.sh");
    ADD_FAILURE() << "read without the recipe's staleness";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "async_training.staleness_threshold");
  }
}

// The GRPO script launched as veRL's one-step-off recipe's scripts do, with `pools` (the trainer's and the
// rollout's nodes and GPUs) in place of the hybrid engine's one.
Read read_one_step_off(const std::string& pools) {
  std::string line = testing::kVerlGrpoScript;
  const std::string module = "verl.trainer.main_ppo", hybrid = "trainer.n_gpus_per_node=8 trainer.nnodes=1";
  line.replace(line.find(module), module.size(), "verl.experimental.one_step_off_policy.main_ppo");
  line.replace(line.find(hybrid), hybrid.size(), pools);
  return read_script(line + "\n");
}

// veRL's one-step-off recipe, launched as its scripts do (`-m verl.experimental.one_step_off_policy.main_ppo`,
// no staleness key): the rollout's own pool one step ahead, no partial rollouts, data.train_batch_size a step.
TEST(VerlReader, OneStepOffRecipeIsReadAsOneStepAhead) {
  const Read r = read_one_step_off(
      "trainer.n_gpus_per_node=8 trainer.nnodes=1 rollout.nnodes=1 rollout.n_gpus_per_node=8");
  EXPECT_EQ(r.run.config["train"]["staleness"], 1);
  EXPECT_FALSE(r.run.config["train"].contains("partial_rollout"));
  EXPECT_EQ(r.run.config["batch"]["prompts"], 256);  // data.train_batch_size
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 2, "devices_per_node": 8})"));
  EXPECT_TRUE(testing::noted(r, "-m"));
  EXPECT_FALSE(testing::noted(r, "async_training.staleness_threshold"));
}

// The two pools take any number of nodes each (veRL's Qwen3-30B-A3B recipe runs 12 + 4): veRL's placements
// hold a 3 + 1-node split, so the layout prices; the asynchronous rollout sends requests one by one, so its
// 1,024 sequences need not split over its 12 replicas.
TEST(VerlReader, PoolsOfAnyNodeCountsAreReadAsTheyRun) {
  const Read r = read_one_step_off(
      "trainer.n_gpus_per_node=8 trainer.nnodes=1 rollout.nnodes=3 rollout.n_gpus_per_node=8 "
      "actor_rollout_ref.rollout.tensor_model_parallel_size=2");
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 4, "devices_per_node": 8})"));
  const ExecutionPlan& plan = r.plan;
  const MfcAssignment& gen = plan.assignments[size_t(r.graph.mfc_index("actor_gen"))];
  const DeviceMesh train = plan.assignments[size_t(r.graph.mfc_index("actor_train"))].mesh;
  EXPECT_EQ(gen.mesh.size, 24);
  EXPECT_EQ(gen.strategy.dp, 12);
  EXPECT_EQ(train.size, 8);
  EXPECT_FALSE(gen.mesh.overlaps(train));
  EXPECT_EQ(engines::can_run(*engines::make_engine("verl"), r.graph, r.cluster, plan), "");
}

// One node split between the pools (veRL's 2_6 scripts: 2 rollout GPUs beside 6 trainers): a 6-GPU trainer
// mesh, which veRL's placements hold; the 4_12 scripts' 6 GPUs on each of two nodes stay refused, naming the
// key (realign's meshes are consecutive devices).
TEST(VerlReader, ANodeSplitBetweenThePoolsIsReadAsItRuns) {
  // (384 sequences in mini-batches of 192: both split over the 6 trainers.)
  const Read r = read_one_step_off(
      "trainer.n_gpus_per_node=6 trainer.nnodes=1 rollout.nnodes=1 rollout.n_gpus_per_node=2 "
      "data.train_batch_size=96 actor_rollout_ref.actor.ppo_mini_batch_size=48");
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 1, "devices_per_node": 8})"));
  const auto mesh = [&](const char* call) {
    return r.plan.assignments[size_t(r.graph.mfc_index(call))].mesh;
  };
  EXPECT_EQ(mesh("actor_gen"), (DeviceMesh{0, 2}));
  EXPECT_EQ(mesh("actor_train"), (DeviceMesh{2, 6}));
  EXPECT_EQ(r.plan.assignments[size_t(r.graph.mfc_index("actor_train"))].strategy.dp, 6);
  EXPECT_EQ(engines::can_run(*engines::make_engine("verl"), r.graph, r.cluster, r.plan), "");
  testing::expect_refused(
      "verl",
      [] {
        std::string line = testing::kVerlGrpoScript;
        const std::string module = "verl.trainer.main_ppo";
        line.replace(line.find(module), module.size(), "verl.experimental.one_step_off_policy.main_ppo");
        return line;
      }(),
      {{"trainer.n_gpus_per_node=6 trainer.nnodes=2 rollout.nnodes=2 rollout.n_gpus_per_node=2\n",
        "rollout.n_gpus_per_node"}});
}

// veRL's defaults as veRL applies them (issue 44): the generated trainer configs' values and the workers'
// behaviour, not a flat default per key.
TEST(VerlReader, DefaultsAreReadAsVerlAppliesThem) {
  const std::string grpo =
      "algorithm.adv_estimator=grpo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B data.train_batch_size=256 "
      "actor_rollout_ref.actor.ppo_mini_batch_size=64 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 actor_rollout_ref.rollout.n=4 "
      "trainer.nnodes=1 trainer.n_gpus_per_node=8 ";
  const std::string kl =
      "actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2 ";
  auto at = [](const Read& r, const std::string& call) {
    return r.plan.assignments[size_t(r.graph.mfc_index(call))].strategy;
  };
  // The reference's Megatron sizes default to the actor's (and it runs in the actor's parallel state); a
  // script setting another is refused naming the ref's key, not a --plan the user never passed.
  const std::string megatron = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer " + grpo +
                               kl +
                               "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4 "
                               "actor_rollout_ref.actor.megatron.param_offload=True ";
  const Read m = read_script(megatron);
  EXPECT_EQ(to_string(at(m, "ref_inf")), to_string(Strategy{2, 4, 1, 256}));
  EXPECT_EQ(m.plan.offload, std::vector<Role>{Role::kRef});  // param_offload follows the actor's too
  testing::expect_refused("verl", megatron,
                          {{"actor_rollout_ref.ref.megatron.tensor_model_parallel_size=2",
                            "actor_rollout_ref.ref.megatron.tensor_model_parallel_size"}});
  // The critic shares that parallel state: its tp left at veRL's default 1 is read as the actor's (noted),
  // one set otherwise is refused naming its key.
  const std::string ppo = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer " + grpo + kl +
                          "algorithm.adv_estimator=gae critic.model.path=Qwen/Qwen2.5-7B "
                          "critic.ppo_micro_batch_size_per_gpu=4 "
                          "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4 ";
  const Read critic = read_script(ppo);
  EXPECT_EQ(at(critic, "critic_train").tp, 4);
  EXPECT_TRUE(testing::noted(critic, "critic.megatron.tensor_model_parallel_size"));
  testing::expect_refused(
      "verl", ppo,
      {{"critic.megatron.tensor_model_parallel_size=2", "critic.megatron.tensor_model_parallel_size"}});
  // Megatron cuts experts by the tp where veRL leaves expert_tensor_parallel_size null: priced with whole
  // experts, said.
  const std::string moe = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer " + grpo + kl +
                          "actor_rollout_ref.model.path=Qwen/Qwen3-30B-A3B trainer.nnodes=4 "
                          "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 "
                          "actor_rollout_ref.actor.megatron.expert_model_parallel_size=8 ";
  const std::string etp = "actor_rollout_ref.actor.megatron.expert_tensor_parallel_size";
  EXPECT_TRUE(testing::noted(read_script(moe), etp));
  EXPECT_FALSE(testing::noted(read_script(moe + etp + "=1"), etp));
  // FSDP recomputes by default (model.enable_gradient_checkpointing: true); the switch turns it off.
  const std::string fsdp = "python3 -m verl.trainer.main_ppo " + grpo + kl;
  EXPECT_TRUE(at(read_script(fsdp), "actor_train").recompute);
  EXPECT_FALSE(
      at(read_script(fsdp + "actor_rollout_ref.model.enable_gradient_checkpointing=False"), "actor_train")
          .recompute);
  // fsdp_size=2 on 8 GPUs is HSDP over groups of 2: priced so (EnginePricing.HybridSharding...), and said;
  // 8 (or -1) is the whole pool.
  const Read hsdp = read_script(fsdp + "actor_rollout_ref.actor.fsdp_config.fsdp_size=2");
  EXPECT_EQ(hsdp.run.pricing_options["fsdp_size"], 2);
  EXPECT_TRUE(testing::noted(hsdp, "actor_rollout_ref.actor.fsdp_config.fsdp_size"));
  const Read whole = read_script(fsdp + "actor_rollout_ref.actor.fsdp_config.fsdp_size=8");
  EXPECT_FALSE(whole.run.pricing_options.contains("fsdp_size"));
  testing::expect_refused(
      "verl", fsdp,
      {{"actor_rollout_ref.actor.fsdp_config.fsdp_size=3", "actor_rollout_ref.actor.fsdp_config.fsdp_size"}});
  // No KL term: veRL builds no reference (need_reference_policy), and none is priced: no ref_inf, said.
  const Read no_kl = read_script("python3 -m verl.trainer.main_ppo " + grpo);
  EXPECT_EQ(no_kl.run.config["models"]["ref"], "none");
  EXPECT_EQ(no_kl.graph.mfc_index("ref_inf"), -1);
  EXPECT_TRUE(testing::noted(no_kl, "actor_rollout_ref.actor.use_kl_loss"));
  // With one, the reference is priced and the term read in its form (veRL's kl_loss_coef default 0.001).
  const Read kl_loss = read_script(fsdp);
  EXPECT_GE(kl_loss.graph.mfc_index("ref_inf"), 0);
  EXPECT_EQ(kl_loss.run.config["train"]["ppo"], Json::parse(R"({"kl_mode": "loss", "kl_coef": 0.001})"));
}

// vLLM (and SGLang) replicate KV heads under a tp above them (vllm/model_executor/models/qwen2.py,
// Qwen2Attention: tp must divide the attention heads and be a multiple of the KV heads): a rollout at tp 8
// over Qwen3-30B-A3B's 4 KV heads is read and valid on the engine, searched by the engines, and its KV cache
// holds one head a rank; realign's own runtime, which splits KV heads only, keeps its limit.
TEST(VerlReader, RolloutTensorParallelAboveTheKvHeadsIsValidOnTheServingEngine) {
  const Read r = read_script(
      "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer algorithm.adv_estimator=grpo "
      "actor_rollout_ref.model.path=Qwen/Qwen3-30B-A3B actor_rollout_ref.actor.use_kl_loss=True "
      "data.train_batch_size=256 actor_rollout_ref.actor.ppo_mini_batch_size=64 "
      "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.actor.megatron.expert_model_parallel_size=8 "
      "actor_rollout_ref.rollout.tensor_model_parallel_size=8 "
      "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 actor_rollout_ref.rollout.n=4 "
      "trainer.nnodes=4 trainer.n_gpus_per_node=8");
  const size_t gen = size_t(r.graph.mfc_index("actor_gen"));
  const Mfc& m = r.graph.mfcs[gen];
  const ModelSpec& spec = r.graph.model(m.model).spec;
  ASSERT_EQ(spec.n_kv_heads, 4);
  const MfcAssignment& a = r.plan.assignments[gen];
  EXPECT_EQ(a.strategy.tp, 8);
  EXPECT_EQ(strategy_problem(m, spec, r.cluster, a.mesh.size, a.strategy, true), "");
  EXPECT_NE(strategy_problem(m, spec, r.cluster, a.mesh.size, a.strategy), "");  // realign's runtime
  ExecutionPlan plan = r.plan;
  EXPECT_NO_THROW(validate_plan(r.graph, r.cluster, plan, "launch.sh", true));
  // Replicated, not split: one KV head a rank (2 x 1 x head_dim), never none.
  EXPECT_EQ(spec.kv_cache_elements_per_rank(8), 2.0 * double(spec.head_dim));
  // Still refused where vLLM refuses it: a tp above the KV heads that is no multiple of them.
  ModelSpec three = spec;
  three.n_kv_heads = 3;
  EXPECT_NE(tp_incompatibility(three, 4, true), "");
  EXPECT_EQ(tp_incompatibility(three, 8, true).find("tp 8 is not a multiple of 3 KV heads"), 0u);
  // The engines' searches (generation_waves: a serving engine's generation) propose it; realign's does not.
  auto has_tp8 = [&](bool serving) {
    for (const Strategy& s : enumerate_strategies(m, spec, r.cluster, 8, 16, serving))
      if (s.tp == 8) return true;
    return false;
  };
  EXPECT_TRUE(has_tp8(true));
  EXPECT_FALSE(has_tp8(false));
}

TEST(VerlReader, WhatRealignCannotPriceIsRefusedNamingTheKey) {
  const std::string base =
      "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
      "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B "
      "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 "
      "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 actor_rollout_ref.rollout.n=4 ";
  EXPECT_NO_THROW(read_script(base));
  const std::string eager = "actor_rollout_ref.rollout.enforce_eager";
  EXPECT_TRUE(testing::noted(read_script(base + eager + "=True"), eager));  // priced with CUDA graphs
  const std::string dynamic_sampling = "algorithm.filter_groups.enable";    // DAPO's: generates more
  EXPECT_TRUE(testing::noted(read_script(base + dynamic_sampling + "=True data.gen_batch_size=1536"),
                             dynamic_sampling));
  // A recipe's own config may set what the command line does not: said, not guessed.
  const Read recipe = read_script(base + "--config-name=my_recipe");
  ASSERT_FALSE(recipe.notes.empty());
  EXPECT_NE(recipe.notes.front().find("--config-name: 'my_recipe' is not found"), std::string::npos)
      << recipe.notes.front();
  testing::expect_refused(
      "verl", base,
      {
          {"algorithm.adv_estimator=remax", "algorithm.adv_estimator"},
          {"async_training.staleness_threshold=0 rollout.nnodes=1", "async_training.staleness_threshold"},
          {"async_training.staleness_threshold=1 algorithm.adv_estimator=gae", "algorithm.adv_estimator"},
          {"async_training.staleness_threshold=1 trainer.nnodes=2 rollout.n_gpus_per_node=4",
           "rollout.n_gpus_per_node"},
          {"actor_rollout_ref.hybrid_engine=False", "actor_rollout_ref.hybrid_engine"},
          {"actor_rollout_ref.actor.strategy=deepspeed", "actor_rollout_ref.actor.strategy"},
          {"actor_rollout_ref.model.lora_rank=32", "actor_rollout_ref.model.lora_rank"},
          {"actor_rollout_ref.model.lora.rank=32", "actor_rollout_ref.model.lora.rank"},  // Megatron LoRA
          {"actor_rollout_ref.actor.ulysses_sequence_parallel_size=8",                    // 28 heads
           "actor_rollout_ref.actor.ulysses_sequence_parallel_size"},
          {"actor_rollout_ref.actor.ppo_mini_batch_size=300", "actor_rollout_ref.actor.ppo_mini_batch_size"},
          {"actor_rollout_ref.rollout.tensor_model_parallel_size=3",
           "actor_rollout_ref.rollout.tensor_model_parallel_size"},
          {"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=null",
           "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"},
      });
}

}  // namespace
}  // namespace realign
