// Reading an engine's launch script as its users write them: bash quoting, continuations, comments and
// variables, Hydra's override forms, typed values, and errors that name the key or the file.
#include "engines/script_reader.h"

#include <gtest/gtest.h>

#include "core/error.h"

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
  const auto e = read_launch_overrides(script, "run.sh");
  ASSERT_NE(value_of(e, "--config-name"), nullptr);
  EXPECT_EQ(*value_of(e, "--config-name"), "ppo_megatron_trainer.yaml");
  EXPECT_EQ(value_of(e, "data.cache_dir"), nullptr);  // the other command's
  EXPECT_EQ(*value_of(e, "data.train_files"), "['$HOME/a.parquet', '$HOME/b.parquet']");
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
  const auto with_env = read_launch_overrides(script, "run.sh", {{"NNODES", "4"}});
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
      "python3 -m verl.trainer.main_ppo trainer.nnodes=$NODES trainer.n_gpus_per_node=eight a.b=null\n",
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
  // No shape of that name: the path itself, for the config to resolve or name.
  EXPECT_EQ(engines::model_for_path("deepseek-ai/deepseek-llm-7b-chat"), "deepseek-ai/deepseek-llm-7b-chat");
}

}  // namespace
}  // namespace realign
