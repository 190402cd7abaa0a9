// OpenRLHF launch scripts read back into a realign workload and plan: what realign's writer writes reads back
// to its plan, a user's `ray job submit ... -- python3 -m openrlhf.cli.train_ppo_ray` script to the layout it
// runs, and what realign cannot price is refused naming the flag.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"

namespace realign {
namespace {

using testing::h100;

using Read = testing::ReadScript;

Read read_script(const std::string& script) { return testing::read_script("openrlhf", script); }

TEST(OpenRlhfReader, ScriptWrittenByRealignReadsBackToItsPlan) {
  const AlgorithmConfig a = testing::ppo_7b();
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  const ExecutionPlan plan = testing::openrlhf_split(g, true);
  const auto openrlhf = engines::make_engine("openrlhf");
  ASSERT_EQ(engines::can_run(*openrlhf, g, c, plan), "");
  engines::WriteInput in;
  in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
  in.graph = &g;
  in.cluster = &c;
  in.batch = a.batch;
  in.raw_config = Json::parse(R"({"models": {"actor": "/ckpt/llama2-7b", "critic": "/ckpt/critic/llama2-7b",
                                             "reward": "/ckpt/rm/llama2-7b"}})");
  const Read r = read_script(openrlhf->launch_files(in, plan).at(0).text);
  EXPECT_EQ(r.run.config["algorithm"], "ppo");
  EXPECT_EQ(r.run.config["batch"]["prompts"], a.batch.prompts);
  EXPECT_EQ(r.run.config["batch"]["mini_batches"], a.batch.mini_batches);
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 2, "devices_per_node": 8})"));
  EXPECT_EQ(r.run.options["gradient_checkpointing"], true);
  ASSERT_EQ(r.plan.assignments.size(), plan.assignments.size());
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    SCOPED_TRACE(plan.assignments[i].mfc);
    // Each group's size is in the flags; which GPUs Ray gives which group is not.
    EXPECT_EQ(r.plan.assignments[i].mesh.size, plan.assignments[i].mesh.size);
    EXPECT_EQ(to_string(r.plan.assignments[i].strategy), to_string(plan.assignments[i].strategy));
  }
}

TEST(OpenRlhfReader, UsersRayJobScriptReadsToTheLayoutItRuns) {
  const Read r = read_script(R"(#!/bin/bash
set -x
ray job submit --address="http://127.0.0.1:8265" \
   --runtime-env-json='{"working_dir": "/openrlhf"}' \
   -- python3 -m openrlhf.cli.train_ppo_ray \
   --ref_num_nodes 1 --ref_num_gpus_per_node 8 \
   --actor_num_nodes 1 --actor_num_gpus_per_node 8 \
   --vllm_num_engines 4 --vllm_tensor_parallel_size 2 \
   --colocate_all_models --vllm_enable_sleep --vllm_gpu_memory_utilization 0.5 \
   --pretrain Qwen/Qwen2.5-7B-Instruct \
   --remote_rm_url http://localhost:5000/get_reward \
   --micro_train_batch_size 4 --train_batch_size 128 \
   --micro_rollout_batch_size 16 --rollout_batch_size 64 --n_samples_per_prompt 8 \
   --max_epochs 1 --prompt_max_len 1024 --generate_max_len 2048 \
   --advantage_estimator reinforce_baseline \
   --zero_stage 3 --bf16 --gradient_checkpointing \
   --init_kl_coef 1e-3 --packing_samples
)");
  EXPECT_EQ(r.run.config["algorithm"], "grpo");
  EXPECT_EQ(r.run.config["models"]["actor"], "qwen2.5-7b");
  EXPECT_EQ(r.run.config["reward"]["kind"], "verifier");
  EXPECT_EQ(r.run.config["batch"]["mini_batches"], 4);  // 64 x 8 samples, 128 per step
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 1, "devices_per_node": 8})"));
  EXPECT_EQ(r.run.options["zero_stage"], 3);
  auto at = [&](const std::string& call) { return r.plan.assignments[size_t(r.graph.mfc_index(call))]; };
  EXPECT_EQ(to_string(at("actor_gen").strategy), to_string(Strategy{4, 2, 1, 1}));
  // 128 samples per step over 8 GPUs: 16 each, in micro-batches of 4; 512 samples of inference, 64 each in
  // 16s.
  EXPECT_EQ(to_string(at("actor_train").strategy), to_string(Strategy{8, 1, 1, 4, true, true}));
  EXPECT_EQ(to_string(at("ref_inf").strategy), to_string(Strategy{8, 1, 1, 4}));
  EXPECT_EQ(at("actor_gen").mesh, (DeviceMesh{0, 8}));
  EXPECT_EQ(at("actor_train").mesh, (DeviceMesh{0, 8}));
}

// reinforce normalises advantages over the batch, so OpenRLHF runs it with one sample a prompt
// (train_ppo_ray.py asserts n > 1 only for the group estimators): read, priced as GRPO's calls over the
// same sequences, and said.
TEST(OpenRlhfReader, ReinforceWithOneSampleAPromptIsRead) {
  const std::string script =
      "python3 -m openrlhf.cli.train_ppo_ray --pretrain Qwen/Qwen2.5-7B --advantage_estimator reinforce "
      "--n_samples_per_prompt 1 --train_batch_size 64 --vllm_num_engines 8 --colocate_all_models "
      "--rollout_batch_size ";
  const auto r = read_script(script + "128");
  EXPECT_EQ(r.run.config["algorithm"], "grpo");
  EXPECT_EQ(r.algorithm.batch.prompts * r.algorithm.batch.samples_per_prompt, 128);  // the script's sequences
  EXPECT_EQ(r.run.config["batch"]["mini_batches"], 2);
  EXPECT_EQ(r.graph.mfcs[size_t(r.graph.mfc_index("actor_gen"))].n_seqs, 128);
  EXPECT_TRUE(testing::noted(r, "--n_samples_per_prompt"));
  // Priced as pairs; the config written for the same workload keeps the script's settings.
  std::map<std::string, Json> kept;
  for (const auto& e : r.run.workload) kept[e.key] = e.value;
  EXPECT_EQ(kept, (std::map<std::string, Json>{{"--algo.advantage.estimator", "reinforce"},
                                               {"--rollout.n_samples_per_prompt", 1},
                                               {"--rollout.batch_size", 128}}));
  testing::expect_refused("openrlhf", script, {{"127 --train_batch_size 127", "--rollout_batch_size"}});
}

// PPO's critic left out starts from the reward model, or from the actor's model with a
// remote reward, as train_ppo_ray.py sets it after parsing.
TEST(OpenRlhfReader, CriticDefaultsToTheRewardModel) {
  const std::string ppo =
      "python3 -m openrlhf.cli.train_ppo_ray --pretrain Qwen/Qwen2.5-7B --advantage_estimator gae "
      "--rollout_batch_size 128 --train_batch_size 128 --vllm_num_engines 8 --colocate_all_models ";
  const auto rm = read_script(ppo + "--reward_pretrain /ckpt/llama3-8b");
  EXPECT_EQ(rm.run.config["models"]["critic"], "llama3-8b");
  EXPECT_TRUE(testing::noted(rm, "--critic_pretrain"));
  const auto remote = read_script(ppo + "--remote_rm_url http://rm:5000/get_reward");
  EXPECT_EQ(remote.run.config["models"]["critic"], "qwen2.5-7b");
  testing::expect_refused("openrlhf", ppo, {{"", "--critic_pretrain"}});
}

TEST(OpenRlhfReader, WhatRealignCannotPriceIsRefusedNamingTheFlag) {
  const std::string base =
      "python3 -m openrlhf.cli.train_ppo_ray --pretrain Qwen/Qwen2.5-7B --advantage_estimator group_norm "
      "--n_samples_per_prompt 4 --rollout_batch_size 128 --train_batch_size 128 --vllm_num_engines 8 "
      "--colocate_all_models ";
  EXPECT_FALSE(testing::noted(read_script(base), "--enforce_eager"));
  EXPECT_TRUE(testing::noted(read_script(base + "--enforce_eager"), "--enforce_eager"));  // priced otherwise
  testing::expect_refused(
      "openrlhf", base,
      {
          {"--advantage_estimator kto", "--advantage_estimator"},
          {"--ds_tensor_parallel_size 2", "--ds_tensor_parallel_size"},
          {"--ring_attn_size 2", "--ring_attn_size"},
          {"--lora_rank 16", "--lora_rank"},
          {"--train_batch_size 100", "--train_batch_size"},
          {"--vllm_tensor_parallel_size 2", "--colocate_all_models"},  // 16 vLLM GPUs on the actor's 8
      });

  try {
    read_script("python3 -m openrlhf.cli.train_ppo_ray --pretrain x --rollout_batch_size 8");
    ADD_FAILURE() << "read without vLLM engines";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "--vllm_num_engines");
  }
}

}  // namespace
}  // namespace realign
