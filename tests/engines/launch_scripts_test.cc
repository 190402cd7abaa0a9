// Real engines' launch scripts (trimmed excerpts in tests/engines/scripts, each naming its repository, commit
// and file) read as bash runs them: the values their launch lines pass once arithmetic, nested defaults,
// sourced env files, path-only command substitutions and flag arrays are expanded.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/read_file.h"
#include "engines/script_reader.h"

namespace realign {
namespace {

using engines::ConfigEntry;

const std::string kScripts = std::string(REALIGN_SOURCE_DIR) + "/tests/engines/scripts/";

Json value(const std::vector<ConfigEntry>& entries, const std::string& key) {
  for (const auto& e : entries)
    if (e.key == key) return e.value;
  ADD_FAILURE() << key << " not read";
  return nullptr;
}

TEST(LaunchScripts, VerlDapoFullyAsyncReadsItsArithmeticAndNestedDefaults) {
  const std::string file = kScripts + "verl_dapo_fully_async.sh";
  const auto e = engines::read_launch_overrides(read_file(file), file, {{"HOME", "/home/u"}});
  // max_prompt_length=$((1024 * 2)), actor_ppo_max_token_len=$(((max_prompt_length + max_response_length) *
  // 2))
  EXPECT_EQ(value(e, "data.max_prompt_length"), 2048);
  EXPECT_EQ(value(e, "data.max_response_length"), 8192);
  EXPECT_EQ(value(e, "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"), 20480);
  EXPECT_EQ(value(e, "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"), 30720);
  EXPECT_EQ(value(e, "actor_rollout_ref.rollout.max_num_batched_tokens"), 10240);
  EXPECT_EQ(value(e, "rollout.total_rollout_steps"), 51200);
  // MODEL_PATH=${MODEL_PATH:-"${RAY_DATA_HOME}/models/Qwen2.5-Math-7B"},
  // RAY_DATA_HOME=${RAY_DATA_HOME:-"${HOME}/verl"}
  EXPECT_EQ(value(e, "actor_rollout_ref.model.path"), "/home/u/verl/models/Qwen2.5-Math-7B");
  EXPECT_EQ(value(e, "trainer.default_local_dir"),
            "/home/u/verl/ckpts/DAPO/DAPO-Qwen2.5-7b-MATH-0527a1-fsdp2-fully-async-8-8");
  EXPECT_EQ(value(e, "data.return_raw_chat"), true);  // assigned inside `if ...; then`
  EXPECT_EQ(value(e, "actor_rollout_ref.model.override_config.max_position_embeddings"), 32768);
  EXPECT_EQ(value(e, "trainer.nnodes"), 1);
  // The user's environment stands in for the script's defaults.
  const auto two =
      engines::read_launch_overrides(read_file(file), file, {{"HOME", "/h"}, {"NNODES_TRAIN", "2"}});
  EXPECT_EQ(value(two, "trainer.nnodes"), 2);
}

TEST(LaunchScripts, NemoRlTestSuiteFindsItsRecipeThroughTheEnvFileItSources) {
  const std::string dir = kScripts + "nemo_rl/tests/test_suites/llm/";
  const std::string file = dir + "grpo-qwen3-8b-1n8g.sh";
  const auto e = engines::read_launch_overrides(read_file(file), file, {});
  // SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &> /dev/null && pwd), EXP_NAME=$(basename $0 .sh),
  // CONFIG_PATH=$(echo $SCRIPT_DIR/${EXP_NAME}.yaml | sed 's#tests/test_suites#examples/configs/recipes#')
  const std::string root = std::filesystem::absolute(kScripts + "nemo_rl").lexically_normal().string();
  EXPECT_EQ(value(e, "--config"), root + "/examples/configs/recipes/llm/grpo-qwen3-8b-1n8g.yaml");
  EXPECT_EQ(value(e, "grpo.max_num_steps"), 30);
  EXPECT_EQ(value(e, "cluster.num_nodes"), 1);
  EXPECT_EQ(value(e, "logger.wandb.name"), "grpo-qwen3-8b-1n8g");
}

TEST(LaunchScripts, OpenRlhfFlagArraysReachTheCommandLine) {
  const std::string file = kScripts + "openrlhf_flag_arrays.sh";
  const auto e = engines::read_launch_flags(read_file(file), file, {});
  EXPECT_EQ(value(e, "--actor.model_name_or_path"), "Qwen/Qwen3-4B-Thinking-2507");
  EXPECT_EQ(value(e, "--vllm.num_engines"), 2);
  EXPECT_EQ(value(e, "--ds.zero_stage"), 3);
  EXPECT_EQ(value(e, "--train.colocate_all"), true);
  std::string work = std::filesystem::absolute(kScripts + "../..").lexically_normal().string();
  if (work.back() == '/') work.pop_back();
  EXPECT_EQ(value(e, "--ckpt.path"), work + "/exp/Qwen3-4B-Thinking/ckpt");
  for (const auto& entry : e) EXPECT_NE(entry.key, "--reward.model_name_or_path");  // commented out
}

}  // namespace
}  // namespace realign
