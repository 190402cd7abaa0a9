// Reading an engine's launch script as its users write them: bash quoting, continuations, comments and
// variables, Hydra's override forms, typed values, and errors that name the key or the file.
#include "engines/script_reader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "graph/model_spec.h"
#include "testing/temp_dir.h"

namespace realign {
namespace {

using engines::ConfigEntry;
using engines::LaunchSettings;
using engines::read_launch_overrides;

const Json* value_of(const std::vector<ConfigEntry>& entries, const std::string& key) {
  for (const auto& e : entries)
    if (e.key == key) return &e.value;
  return nullptr;
}

TEST(ScriptReader, ReadsTheOverridesOfTheCommandLineWithBashQuotingAndVariables) {
  const std::string script = R"(#!/usr/bin/env bash
set -x
# trainer.nnodes=99 in a comment is not an override
NNODES=${NNODES:-2}
export TP=4
files="['$HOME/a.parquet', '$HOME/b.parquet']"
python3 prepare.py data.cache_dir=/tmp   # another command, with fewer overrides
python3 -m verl.trainer.main_ppo --config-path=config \
    --config-name 'ppo_megatron_trainer.yaml' \
    data.train_files="$files" \
    data.train_batch_size=512 \
    +actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.rollout.name='vllm' \
    critic.ppo_micro_batch_size_per_gpu=null \
    trainer.logger=['console','wandb'] \
    trainer.nnodes=$NNODES \
    data.train_batch_size=1024 \
    trainer.total_epochs=15 "$@"
)";
  const auto e = read_launch_overrides(script, "run.sh", {{"HOME", "/home/u"}});
  ASSERT_NE(value_of(e, "--config-name"), nullptr);
  EXPECT_EQ(*value_of(e, "--config-name"), "ppo_megatron_trainer.yaml");
  EXPECT_EQ(value_of(e, "data.cache_dir"), nullptr);  // the other command's
  EXPECT_EQ(*value_of(e, "data.train_files"), "['/home/u/a.parquet', '/home/u/b.parquet']");
  EXPECT_EQ(*value_of(e, "data.train_batch_size"), 1024);  // the later override wins
  EXPECT_EQ(*value_of(e, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size"), 4);
  EXPECT_EQ(*value_of(e, "actor_rollout_ref.actor.use_kl_loss"), true);
  EXPECT_DOUBLE_EQ(value_of(e, "actor_rollout_ref.actor.optim.lr")->get<double>(), 1e-6);
  EXPECT_EQ(*value_of(e, "actor_rollout_ref.rollout.name"), "vllm");
  EXPECT_TRUE(value_of(e, "critic.ppo_micro_batch_size_per_gpu")->is_null());
  EXPECT_EQ(*value_of(e, "trainer.logger"), "[console,wandb]");
  EXPECT_EQ(*value_of(e, "trainer.nnodes"), 2);
  EXPECT_EQ(*value_of(e, "-m"), "verl.trainer.main_ppo");  // where Hydra looks for a relative --config-path
  EXPECT_EQ(*value_of(e, "--config-path"), "config");
  EXPECT_EQ(e[4].key, "data.train_batch_size");  // the later override took the earlier one's place

  // The environment a user passes stands in for the script's defaults.
  const auto with_env = read_launch_overrides(script, "run.sh", {{"NNODES", "4"}, {"HOME", "/home/u"}});
  EXPECT_EQ(*value_of(with_env, "trainer.nnodes"), 4);
}

TEST(ScriptReader, TopLevelKeysAndALineNamingOnlyItsConfigAreOverrides) {
  // AReaL's launch: top-level keys in lower case; an upper-case NAME=value before the command is the
  // environment's.
  const auto e = read_launch_overrides(
      "CUDA_VISIBLE_DEVICES=0,1 python3 -m areal.launcher.local train.py --config my.yaml "
      "allocation_mode=sglang:d4+fsdp:d4 experiment_name=x\n",
      "run.sh");
  EXPECT_EQ(*value_of(e, "--config"), "my.yaml");
  EXPECT_EQ(*value_of(e, "allocation_mode"), "sglang:d4+fsdp:d4");
  EXPECT_EQ(value_of(e, "CUDA_VISIBLE_DEVICES"), nullptr);
  // A launch that overrides nothing still names its config.
  const auto bare =
      read_launch_overrides("echo start\nuv run examples/run_grpo.py --config base.yaml\n", "run.sh");
  ASSERT_EQ(bare.size(), 2u);
  EXPECT_EQ(*value_of(bare, "--program"), "examples/run_grpo.py");
  EXPECT_EQ(*value_of(bare, "--config"), "base.yaml");
}

TEST(ScriptReader, SettingsNameTheKeyOfAWrongOrUnsetValue) {
  const auto e = read_launch_overrides(
      "python3 -m verl.trainer.main_ppo trainer.nnodes=$NODES trainer.n_gpus_per_node=eight a.b=null "
      "actor_rollout_ref.model.path=$6\n",
      "run.sh");
  const LaunchSettings s(e);
  EXPECT_EQ(s.integer("trainer.missing", 7), 7);
  EXPECT_EQ(s.integer("a.b", 3), 3);  // null reads as the default
  EXPECT_TRUE(s.has("a.b"));
  try {
    s.integer("trainer.nnodes", 1);
    FAIL() << "an unset variable was read";
  } catch (const Error& err) {
    EXPECT_EQ(err.path(), "trainer.nnodes");
    EXPECT_NE(std::string(err.what()).find("$NODES"), std::string::npos) << err.what();
  }
  try {
    s.text("actor_rollout_ref.model.path", "");
    FAIL() << "an argument the script was not given was read";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("the script's argument $6"), std::string::npos) << err.what();
  }
  try {
    s.integer("trainer.n_gpus_per_node", 8);
    FAIL() << "a string was read as an integer";
  } catch (const Error& err) {
    EXPECT_EQ(err.path(), "trainer.n_gpus_per_node");
  }
  try {
    read_launch_overrides("#!/bin/bash\necho nothing to see\n", "empty.sh");
    FAIL() << "a script without overrides was read";
  } catch (const Error& err) {
    EXPECT_EQ(err.path(), "empty.sh");
  }
}

TEST(ScriptReader, ModelPathsMatchBuiltInShapesByName) {
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen2.5-7B-Instruct"), "qwen2.5-7b");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen2.5-72B"), "qwen2.5-72b");
  EXPECT_EQ(engines::model_for_path("meta-llama/Llama-2-7b-chat-hf"), "llama2-7b");
  EXPECT_EQ(engines::model_for_path("meta-llama/Meta-Llama-3-70B-Instruct"), "llama3-70b");
  EXPECT_EQ(engines::model_for_path("/ckpt/Qwen3-30B-A3B/"), "qwen3-30b-a3b");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen2-7B-Instruct"), "qwen2-7b");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen3-8B"), "qwen3-8b");
  EXPECT_EQ(engines::model_for_path("$HOME/models/deepseek-llm-7b-chat"), "deepseek-llm-7b");
  EXPECT_EQ(engines::model_for_path("meta-llama/Llama-3.1-8B-Instruct"), "llama3.1-8b");
  EXPECT_EQ(engines::model_for_path("google/gemma-2-2b-it"), "gemma2-2b");
  EXPECT_EQ(engines::model_for_path("deepseek-ai/DeepSeek-V2-Lite-Chat"), "deepseek-v2-lite");
  EXPECT_EQ(engines::model_for_path("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"),
            "deepseek-r1-distill-qwen-7b");
  // Variant words anywhere between dashes, before a release date too.
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen3-30B-A3B-Instruct-2507"), "qwen3-30b-a3b-2507");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen3-30B-A3B-Thinking-2507"), "qwen3-30b-a3b-2507");
  EXPECT_EQ(engines::model_for_path("mistralai/Mistral-Nemo-Instruct-2407"), "mistral-nemo-2407");
  EXPECT_EQ(engines::model_for_path("/root/verl/models/MiMo-7B-RL"), "mimo-7b");
  EXPECT_EQ(engines::model_for_path("ByteDance-Seed/Seed-OSS-36B-Base"), "seed-oss-36b");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen2.5-Coder-14B-Instruct"), "qwen2.5-coder-14b");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen2-72B-Instruct"), "qwen2-72b");
  EXPECT_EQ(engines::model_for_path("/root/models/gpt-oss-20b-bf16"), "gpt-oss-20b");
  EXPECT_EQ(engines::model_for_path("Qwen/Qwen2.5-7B-Instruct-1M"), "Qwen/Qwen2.5-7B-Instruct-1M");  // 1M ctx
  // Fine-tunes whose model cards name their base, wherever the script keeps them; the lineage is said.
  EXPECT_EQ(engines::model_for_path("OpenRLHF/Llama-3-8b-sft-mixture"), "llama3-8b");
  EXPECT_EQ(engines::model_for_path("OpenRLHF/Llama-3-8b-rm-700k"), "llama3-8b");
  EXPECT_EQ(engines::model_for_path("OpenRLHF/Llama-3-8b-rm-mixture"), "llama3-8b");
  EXPECT_EQ(engines::model_for_path("~/models/FsfairX-LLaMA3-RM-v0.1"), "llama3-8b");
  EXPECT_EQ(engines::model_for_path("/root/models/Skywork-Reward-V2-Llama-3.2-3B/"), "llama3.2-3b");
  EXPECT_EQ(engines::model_for_path("Skywork/Skywork-Reward-Llama-3.1-8B"), "llama3.1-8b");
  EXPECT_EQ(engines::model_for_path("$RAY_DATA_HOME/models/DeepSeek-V3-config-verl"), "deepseek-v3");
  EXPECT_NE(engines::find_model("sfairXC/FsfairX-LLaMA3-RM-v0.1").lineage.find("Meta-Llama-3-8B-Instruct"),
            std::string::npos);
  EXPECT_EQ(engines::find_model("Qwen/Qwen2.5-7B-Instruct").lineage, "");
  // No shape of that name (Gemma 1's model_type gemma is not read): the path itself, for the config to
  // resolve or name.
  EXPECT_EQ(engines::model_for_path("google/gemma-7b-it"), "google/gemma-7b-it");
}

// A model the user has: its own directory, or the Hugging Face cache's snapshot of a hub id (the one
// refs/main names), read before a built-in shape of the same name; a miss names where it looked.
TEST(ScriptReader, ModelsAreReadFromTheConfigTheUserHas) {
  testing::TempDir dir;
  const std::string config = model_spec_to_hf_config(builtin_model("qwen3-8b")).dump();
  const std::string repo = dir.file("hub/models--Qwen--Qwen3-8B");
  for (const std::string& d :
       {repo + "/snapshots/old", repo + "/snapshots/abc123", repo + "/refs", dir.file("local")})
    std::filesystem::create_directories(d);
  testing::write_file(repo + "/snapshots/old/config.json", config);
  testing::write_file(repo + "/snapshots/abc123/config.json", config);
  testing::write_file(repo + "/refs/main", "abc123\n");
  testing::write_file(dir.file("local/config.json"), config);
  const char* was = std::getenv("HF_HUB_CACHE");
  const std::string saved = was ? was : "";
  setenv("HF_HUB_CACHE", dir.file("hub").c_str(), 1);
  const engines::ModelSource cached = engines::find_model("Qwen/Qwen3-8B");
  EXPECT_EQ(cached.model, repo + "/snapshots/abc123/config.json");
  EXPECT_EQ(cached.read, cached.model);
  const engines::ModelSource local = engines::find_model(dir.file("local"));
  EXPECT_EQ(local.model, dir.file("local"));
  EXPECT_EQ(local.read, dir.file("local/config.json"));
  const engines::ModelSource builtin = engines::find_model("Qwen/Qwen3-4B");  // not in this cache
  EXPECT_EQ(builtin.model, "qwen3-4b");
  EXPECT_EQ(builtin.read, "");
  EXPECT_EQ(engines::find_model("org/unknown-13b").model, "");
  const auto places = engines::model_config_places("org/unknown-13b");
  ASSERT_GE(places.size(), 2u);
  EXPECT_EQ(places[1], dir.file("hub/models--org--unknown-13b/snapshots/*/config.json"));
  was ? setenv("HF_HUB_CACHE", saved.c_str(), 1) : unsetenv("HF_HUB_CACHE");
}

}  // namespace
}  // namespace realign
