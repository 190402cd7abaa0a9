// Real engines' launch scripts (trimmed excerpts in tests/engines/scripts, each naming its repository, commit
// and file) read as bash runs them: the values their launch lines pass once arithmetic, nested defaults,
// sourced env files, path-only command substitutions and flag arrays are expanded.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/read_file.h"
#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"
#include "engines/expert_rules.h"
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

const ConfigEntry& entry(const std::vector<ConfigEntry>& entries, const std::string& key) {
  for (const auto& e : entries)
    if (e.key == key) return e;
  static const ConfigEntry none;
  ADD_FAILURE() << key << " not read";
  return none;
}

// Each setting keeps the file and line of the word that writes it (issue 44, point 5): a continued command's
// words on their own lines, a flag from an array on its element's line, a later setting of the key where it
// is written.
TEST(LaunchScripts, EachSettingKeepsTheLineThatWritesIt) {
  const std::string script =
      "#!/bin/bash\n"                                          // 1
      "ARGS=(\n"                                               // 2
      "   --actor.num_nodes 1\n"                               // 3
      "   # --critic.num_nodes 2\n"                            // 4
      "   --vllm.num_engines 2\n"                              // 5
      ")\n"                                                    // 6
      "python3 -m openrlhf.cli.train_ppo_ray \\\n"           // 7
      "   ${ARGS[@]} \\\n"                                   // 8
      "   --ds.zero_stage 3 \\\n"                            // 9
      "   --vllm.num_engines=4\n";                             // 10
  const auto flags = engines::read_launch_flags(script, "run.sh", {});
  EXPECT_EQ(entry(flags, "--actor.num_nodes").line, 3);
  EXPECT_EQ(entry(flags, "--actor.num_nodes").file, "run.sh");
  EXPECT_EQ(entry(flags, "--ds.zero_stage").line, 9);
  EXPECT_EQ(entry(flags, "--vllm.num_engines").line, 10);  // the later setting, where it is written
  EXPECT_EQ(entry(flags, "--vllm.num_engines").value, 4);
  const auto overrides = engines::read_launch_overrides(
      "N=2\npython3 -m verl.trainer.main_ppo \\\n  trainer.nnodes=$N \\\n\n  data.x=1\n", "v.sh");
  EXPECT_EQ(entry(overrides, "trainer.nnodes").line, 3);  // the key's line, not the variable's
  EXPECT_EQ(entry(overrides, "-m").line, 2);
  // The shipped excerpt: the flags of its arrays at their elements' lines.
  const std::string file = kScripts + "openrlhf_flag_arrays.sh";
  const auto arrays = engines::read_launch_flags(read_file(file), file, {});
  EXPECT_EQ(entry(arrays, "--actor.model_name_or_path").line, 12);
  EXPECT_EQ(entry(arrays, "--ds.zero_stage").line, 23);
}

// A launch given to a shell as a command string (`srun ... bash -c "pip install ... && ray job submit ...
// -- python3 -m openrlhf.cli.train_ppo_ray --flag ..."`, OpenRLHF's Slurm example) is read as bash runs it:
// its flags are the launch's, each at its line in the file. Before, the string was one word, no flag was
// read and the script was refused at '--vllm_num_engines', a flag it does not write.
TEST(LaunchScripts, ALaunchInABashCommandStringIsRead) {
  const std::string file = kScripts + "openrlhf_slurm_bash_c.sh";
  const auto e = engines::read_launch_flags(read_file(file), file, {});
  EXPECT_EQ(value(e, "--vllm.num_engines"), 4);
  EXPECT_EQ(value(e, "--actor.model_name_or_path"), "OpenRLHF/Llama-3-8b-sft-mixture");
  EXPECT_EQ(value(e, "--actor.gradient_checkpointing_enable"), true);
  EXPECT_EQ(entry(e, "--vllm.num_engines").line, 23);
  EXPECT_EQ(entry(e, "--actor.gradient_checkpointing_enable").line, 37);
  const engines::ReadRun run = engines::make_engine("openrlhf")->read_run(
      read_file(file), file, {});
  EXPECT_EQ(run.config["cluster"]["nodes"], 2);
}

// A refusal names the key or flag as the script writes it and the line that writes it
// ("FILE:LINE: KEY: ..."), for every reader, in the reader's own checks and in the layout read once the
// graph exists; a key the script does not write is named without a line (its default is refused).
TEST(LaunchScripts, RefusalsNameTheLineThatWritesTheKey) {
  auto refusal = [](const std::string& engine, const std::string& script) {
    try {
      testing::read_script(engine, script, "run.sh");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("read without complaint");
  };
  const std::string verl = testing::kVerlGrpoScript;
  // Ulysses splits the 28 heads of Qwen2.5-7B over its ranks: 8 do not divide them.
  EXPECT_EQ(refusal("verl", verl + "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=8\n")
                .rfind("run.sh:8: actor_rollout_ref.actor.ulysses_sequence_parallel_size: ", 0),
            0u);
  // Read once the graph exists: the Megatron pipeline's size against the model's 28 layers.
  const std::string megatron = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer " +
                               verl.substr(std::string("python3 -m verl.trainer.main_ppo ").size());
  const std::string pp = refusal("verl", megatron +
                                             "    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=8\n");
  EXPECT_EQ(pp.rfind("run.sh:8: actor_rollout_ref.actor.megatron.pipeline_model_parallel_size: 8 does not "
                     "divide the 28 layers",
                     0),
            0u)
      << pp;
  EXPECT_NE(pp.find("pp 1, 2, 4 would be"), std::string::npos) << pp;
  // Megatron's first and last stages set through override_transformer_config (2, 6 x 4, 2): read and noted.
  const testing::ReadScript uneven = testing::read_script(
      "verl",
      megatron + "    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=8 \\\n"
                 "    +actor_rollout_ref.actor.megatron.override_transformer_config."
                 "num_layers_in_first_pipeline_stage=2 \\\n"
                 "    +actor_rollout_ref.actor.megatron.override_transformer_config."
                 "num_layers_in_last_pipeline_stage=2\n",
      "run.sh");
  EXPECT_TRUE(testing::noted(uneven, "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size"));
  EXPECT_EQ(uneven.run.pricing_options[engines::kPipelineStageEnds], true);
  // Or the embedding and the loss counted as a layer each (veRL's Qwen3-235B script): 28 + 2 over pp 2 are
  // stages of 14 and 14; over pp 4 they do not divide, refused naming the pp.
  const std::string counted =
      "    "
      "+actor_rollout_ref.actor.megatron.override_transformer_config.account_for_embedding_in_pipeline_split"
      "=True \\\n"
      "    "
      "+actor_rollout_ref.actor.megatron.override_transformer_config.account_for_loss_in_pipeline_split=True"
      " \\\n";
  const testing::ReadScript ends = testing::read_script(
      "verl", megatron + counted + "    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2\n",
      "run.sh");
  std::string notes;
  for (const auto& n : ends.notes) notes += n + "\n";
  EXPECT_NE(notes.find("stages of 14, 14 layers"), std::string::npos) << notes;
  EXPECT_EQ(ends.run.pricing_options[engines::kPipelineStageEnds], true);
  EXPECT_NE(refusal("verl", megatron + counted +
                                "    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=4\n")
                .find("actor_rollout_ref.actor.megatron.pipeline_model_parallel_size: 4 does not divide the "
                      "28 layers "
                      "and 2 counted"),
            std::string::npos);
  // A rollout replica over whole nodes is read (replica.py runs one over world_size / gpus_per_node nodes);
  // one over part of a node beyond a whole one, or across nodes with expert parallelism (vllm_async_server.py
  // asserts tp divides a node), is refused naming the key (was 'the script runs actor_gen as d1t16p1 x1: tp
  // 16 must stay within one node', naming no key).
  std::string across = verl;
  across.replace(across.find("trainer.nnodes=1"), 16, "trainer.nnodes=2");
  across.replace(across.find("Qwen/Qwen2.5-7B-Instruct"), 24, "Qwen/Qwen3-8B");  // 32 heads
  const std::string tp16 = "    actor_rollout_ref.rollout.tensor_model_parallel_size=16\n";
  EXPECT_EQ(refusal("verl", across + tp16), "read without complaint");
  std::string three = verl;
  three.replace(three.find("trainer.nnodes=1"), 16, "trainer.nnodes=3");
  const std::string tp12 =
      refusal("verl", three + "    actor_rollout_ref.rollout.tensor_model_parallel_size=12\n");
  EXPECT_EQ(
      tp12.rfind("run.sh:8: actor_rollout_ref.rollout.tensor_model_parallel_size: 12 spans nodes of 8 GPUs "
                 "(trainer.n_gpus_per_node) but not whole ones",
                 0),
      0u)
      << tp12;
  std::string moe = across;
  moe.replace(moe.find("Qwen/Qwen3-8B"), 13, "Qwen/Qwen3-30B-A3B");
  const std::string ep =
      refusal("verl", moe +
                          "    actor_rollout_ref.rollout.tensor_model_parallel_size=16 \\\n"
                          "    actor_rollout_ref.rollout.expert_parallel_size=16\n");
  EXPECT_EQ(ep.rfind("run.sh:9: actor_rollout_ref.rollout.expert_parallel_size: 16 with ", 0), 0u) << ep;
  // A dotted OpenRLHF flag, spelled as written (the reader reads flat flags).
  const std::string openrlhf =
      "python3 -m openrlhf.cli.train_ppo_ray \\\n"
      "   --actor.model_name_or_path Qwen/Qwen2.5-7B-Instruct \\\n"
      "   --vllm.num_engines 2 \\\n"
      "   --ds.ring_attn_size 2\n";
  EXPECT_EQ(refusal("openrlhf", openrlhf).rfind("run.sh:4: --ds.ring_attn_size: ", 0), 0u)
      << refusal("openrlhf", openrlhf);
  // Not written: named without a line, as not set.
  const std::string unset = refusal("openrlhf", "python3 -m openrlhf.cli.train_ppo_ray \\\n"
                                                "   --actor.model_name_or_path Qwen/Qwen2.5-7B-Instruct\n");
  EXPECT_EQ(unset.rfind("--vllm.num_engines: not set", 0), 0u) << unset;
  const std::string nemo =
      "uv run examples/run_grpo.py \\\n"
      "  policy.model_name=Qwen/Qwen2.5-7B cluster.gpus_per_node=8 \\\n"
      "  policy.dtensor_cfg.context_parallel_size=3\n";  // does not divide the 8 GPUs
  EXPECT_EQ(refusal("nemo-rl", nemo).rfind("run.sh:3: policy.dtensor_cfg.context_parallel_size: ", 0), 0u)
      << refusal("nemo-rl", nemo);
  // The key import names a model by carries its line too.
  const engines::ReadRun run = engines::make_engine("verl")->read_run(verl, "run.sh", {});
  EXPECT_EQ(run.sources.at("models.actor"), "run.sh:2: actor_rollout_ref.model.path");
  // One the script leaves out is said to be the engine's default (veRL's rollout.n of 1, refused for GRPO by
  // import naming it: the user did not write it).
  const engines::ReadRun one = engines::make_engine("verl")->read_run(
      std::string(verl).replace(verl.find(" actor_rollout_ref.rollout.n=4"), 31, ""), "run.sh", {});
  EXPECT_EQ(one.sources.at("batch.samples_per_prompt"),
            "actor_rollout_ref.rollout.n (not set: the engine's default)");
}

}  // namespace
}  // namespace realign
