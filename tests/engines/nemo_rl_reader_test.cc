// NeMo-RL launches read back into a realign workload and plan: NeMo-RL's own Qwen3-30B-A3B recipe, as
// realign's writer writes it (tests/engines/golden), reads back to the recipe's layout, and what realign
// cannot price is refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/expert_rules.h"
#include "engines/engine_fixtures.h"
#include "plan/execution_plan.h"

namespace realign {
namespace {

using Read = testing::ReadScript;

Read read_script(const std::string& script) { return testing::read_script("nemo-rl", script); }

TEST(NemoRlReader, ItsOwnQwen3MoeRecipeReadsBackToTheRecipesLayout) {
  std::ifstream in(std::string(REALIGN_SOURCE_DIR) +
                   "/tests/engines/golden/nemo_rl_qwen3_30b_a3b_32xh100_launch.sh");
  std::stringstream text;
  text << in.rdbuf();
  std::string script = text.str();
  const std::string placeholder = "\"${ACTOR_MODEL_PATH}\"";
  script.replace(script.find(placeholder), placeholder.size(), "Qwen/Qwen3-30B-A3B");
  const Read r = read_script(script);
  EXPECT_EQ(r.run.config["models"]["actor"], "qwen3-30b-a3b");
  EXPECT_EQ(r.run.config["batch"], Json::parse(R"({"prompts": 64, "samples_per_prompt": 32, "prompt_len": 256,
      "gen_len": 2898, "gen_len_max": 2898, "mini_batches": 4, "epochs": 1})"));
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 4, "devices_per_node": 8})"));
  EXPECT_EQ(r.run.options["backend"], "megatron");
  auto at = [&](const std::string& call) { return r.plan.assignments[size_t(r.graph.mfc_index(call))]; };
  Strategy gen{16, 2, 1, 1};
  EXPECT_EQ(to_string(at("actor_gen").strategy), to_string(gen));
  Strategy train{32, 1, 1, 16, true, false};  // 512 per step over 32 ranks, micro-batches of 1
  train.ep = 8;
  EXPECT_EQ(to_string(at("actor_train").strategy), to_string(train));
  Strategy logprobs{32, 1, 1, 16};  // 2,048 samples over 32 ranks in fours
  logprobs.ep = 8;
  EXPECT_EQ(to_string(at("ref_inf").strategy), to_string(logprobs));
  EXPECT_EQ(at("actor_gen").mesh, (DeviceMesh{0, 32}));  // colocated
  EXPECT_EQ(r.plan.offload, std::vector<Role>{Role::kRef});
}

TEST(NemoRlReader, WhatRealignCannotPriceIsRefusedNamingTheKey) {
  const std::string base =
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "policy.model_name=Qwen/Qwen2.5-7B policy.max_total_sequence_length=2048 "
      "policy.generation.max_new_tokens=1536 ";
  EXPECT_NO_THROW(read_script(base));
  EXPECT_EQ(read_script(base).run.options["backend"], "dtensor");
  const std::string eager = "policy.generation.vllm_cfg.enforce_eager";
  EXPECT_TRUE(testing::noted(read_script(base + eager + "=True"), eager));  // priced with CUDA graphs
  // SGLang priced as vLLM, with its own tensor parallel size (and a bad one refused by its key, below).
  const Read sglang =
      read_script(base + "policy.generation.backend=sglang policy.generation.sglang_cfg.tp_size=2");
  EXPECT_TRUE(testing::noted(sglang, "policy.generation.backend"));
  EXPECT_EQ(sglang.plan.assignments[size_t(sglang.graph.mfc_index("actor_gen"))].strategy.tp, 2);
  testing::expect_refused(
      "nemo-rl", base,
      {
          {"policy.generation.max_new_tokens=0", "policy.generation.max_new_tokens"},
          {"policy.megatron_cfg.enabled=true", "policy.megatron_cfg.enabled"},
          {"policy.dtensor_cfg.context_parallel_size=3", "policy.dtensor_cfg.context_parallel_size"},
          {"policy.generation.vllm_cfg.pipeline_parallel_size=2",
           "policy.generation.vllm_cfg.pipeline_parallel_size"},
          {"policy.train_global_batch_size=100", "policy.train_global_batch_size"},
          {"policy.generation.vllm_cfg.tensor_parallel_size=3",
           "policy.generation.vllm_cfg.tensor_parallel_size"},
          // A replica over part of a node beyond a whole one, and Megatron stages of unequal layer counts (28
          // layers over 8), were refused by the layout's check naming no key ('the script runs actor_gen as
          // ...', 'its layout'). (A replica over whole nodes is read: the test below.)
          {"cluster.num_nodes=3 policy.generation.vllm_cfg.tensor_parallel_size=12",
           "policy.generation.vllm_cfg.tensor_parallel_size"},
          {"policy.megatron_cfg.enabled=true policy.dtensor_cfg.enabled=false "
           "policy.megatron_cfg.pipeline_model_parallel_size=8",
           "policy.megatron_cfg.pipeline_model_parallel_size"},
          {"grpo.async_grpo.enabled=true", "policy.generation.colocated.enabled"},
          // Was refused at vllm_cfg.tensor_parallel_size, a key Megatron's generation does not read.
          {"policy.generation.backend=megatron", "policy.generation.backend"},
          {"policy.generation.backend=hf", "policy.generation.backend"},
          {"policy.generation.backend=sglang policy.generation.sglang_cfg.tp_size=3",
           "policy.generation.sglang_cfg.tp_size"},
          {"policy.generation.vllm_cfg.gpu_memory_utilization=1.5",
           "policy.generation.vllm_cfg.gpu_memory_utilization"},
          {"policy.generation.vllm_cfg.gpu_memory_utilization=0",
           "policy.generation.vllm_cfg.gpu_memory_utilization"},
          // LoRA (its -lora recipes) was priced as full fine-tuning.
          {"policy.dtensor_cfg.lora_cfg.enabled=true", "policy.dtensor_cfg.lora_cfg.enabled"},
          {"policy.megatron_cfg.peft.enabled=true", "policy.megatron_cfg.peft.enabled"},
      });
  // vLLM's share of each GPU bounds generation's memory in the pricing: the base configs' 0.6 unless set.
  EXPECT_EQ(read_script(base).run.pricing_options["generation_memory_fraction"], 0.6);
  EXPECT_EQ(read_script(base + "policy.generation.vllm_cfg.gpu_memory_utilization=0.8")
                .run.pricing_options["generation_memory_fraction"],
            0.8);
}

// Megatron's first and last stages set by the script (28 layers over pp 8: 2, 6 x 4, 2) are read, noted and
// let the engine's rule take a pp that does not divide the layers; ends realign's balanced stages could not
// price, or a split Megatron refuses, are refused naming the key.
TEST(NemoRlReader, MegatronsUnevenFirstAndLastStagesAreRead) {
  const std::string base =
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "policy.model_name=Qwen/Qwen2.5-7B policy.max_total_sequence_length=2048 "
      "policy.generation.max_new_tokens=1536 policy.megatron_cfg.enabled=true policy.dtensor_cfg.enabled=false "
      "policy.megatron_cfg.pipeline_model_parallel_size=8 ";
  const Read r = read_script(base + "policy.megatron_cfg.num_layers_in_first_pipeline_stage=2 "
                                    "policy.megatron_cfg.num_layers_in_last_pipeline_stage=2");
  EXPECT_EQ(r.plan.assignments[size_t(r.graph.mfc_index("actor_train"))].strategy.pp, 8);
  EXPECT_EQ(r.run.pricing_options[engines::kPipelineStageEnds], true);
  EXPECT_TRUE(testing::noted(r, "policy.megatron_cfg.pipeline_model_parallel_size"));
  testing::expect_refused("nemo-rl", base,
                          {{"policy.megatron_cfg.num_layers_in_first_pipeline_stage=10",
                            "policy.megatron_cfg.num_layers_in_first_pipeline_stage"},
                           {"policy.megatron_cfg.num_layers_in_first_pipeline_stage=3",
                            "policy.megatron_cfg.num_layers_in_first_pipeline_stage"}});
  // The engine's rule: equal stages, unless the script sets the ends.
  Strategy s{1, 1, 8, 1};
  EXPECT_FALSE(engines::megatron_layout_problem(builtin_model("qwen2.5-7b"), s).empty());
  EXPECT_TRUE(engines::megatron_layout_problem(builtin_model("qwen2.5-7b"), s, true).empty());
}

// On one node generation may take any share of the GPUs (grpo.py's setup: resources.gpus_per_node below the
// node's, num_nodes 1), as NeMo-RL's rules say: 2 beside 6 trainers reads as it runs.
TEST(NemoRlReader, GenerationOnAnyShareOfOneNodeIsRead) {
  const Read r = read_script(
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "cluster.num_nodes=1 policy.model_name=Qwen/Qwen2.5-1.5B policy.max_total_sequence_length=2048 "
      "policy.generation.max_new_tokens=1536 policy.generation.colocated.enabled=false "
      "policy.generation.colocated.resources.gpus_per_node=2 "
      "policy.generation.colocated.resources.num_nodes=1 "
      "grpo.num_prompts_per_step=48 grpo.num_generations_per_prompt=8 policy.train_global_batch_size=384");
  const auto mesh = [&](const char* call) {
    return r.plan.assignments[size_t(r.graph.mfc_index(call))].mesh;
  };
  EXPECT_EQ(mesh("actor_gen").size, 2);
  EXPECT_EQ(mesh("actor_train").size, 6);
  EXPECT_FALSE(mesh("actor_gen").overlaps(mesh("actor_train")));
  EXPECT_EQ(engines::can_run(*engines::make_engine("nemo-rl"), r.graph, r.cluster, r.plan), "");
}

// NeMo-RL runs a vLLM replica over whole nodes on one placement group (vllm_generation.py,
// needs_cross_node_parallelism), as its published Qwen3-235B (tp 16) and DeepSeek-V3 (tp 32) runs on nodes of
// 8 do: read as one replica of tp 16 over the 2 nodes, a layout a serving engine's generation may take
// (strategy_problem's serving_engine) and realign's own runtime may not.
TEST(NemoRlReader, AVllmReplicaOverWholeNodesIsRead) {
  const Read r = read_script(
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "cluster.num_nodes=2 policy.model_name=Qwen/Qwen3-8B policy.max_total_sequence_length=2048 "
      "policy.generation.max_new_tokens=1536 policy.generation.vllm_cfg.tensor_parallel_size=16");
  ExecutionPlan plan = r.plan;
  const MfcAssignment& gen = plan.assignments[size_t(r.graph.mfc_index("actor_gen"))];
  EXPECT_EQ(gen.strategy.tp, 16);
  EXPECT_EQ(gen.strategy.dp, 1);
  EXPECT_EQ(gen.mesh, (DeviceMesh{0, 16}));
  EXPECT_NO_THROW(validate_plan(r.graph, r.cluster, plan, "launch.sh", true));
  EXPECT_THROW(validate_plan(r.graph, r.cluster, plan, "launch.sh", false), Error);
}

// NeMo-RL's recipes leave policy.generation.max_new_tokens at the total sequence length (grpo_math_1B.yaml's
// ${policy.max_total_sequence_length}) and run vLLM with max_model_len the total: a response stops at the
// total less its prompt. The prompts' cap is data.max_input_seq_length where the config gives one below the
// total, else an assumed 256 tokens, each said in a note naming the keys and the values priced.
// Its long-context recipes raise the policy's positions through policy.hf_config_overrides: YaRN's factor
// (a resolver over the total length, as grpo-qwen2.5-1.5B-4n8g-megatron-yarn-256k.yaml writes it) times the
// original positions, or max_position_embeddings itself; read so, the lengths fit.
TEST(NemoRlReader, PositionsRaisedByTheHfConfigOverridesAreRead) {
  const std::string base =
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "policy.model_name=Qwen/Qwen2.5-1.5B policy.max_total_sequence_length=262144 ";
  const Read yarn = read_script(
      base +
      "'policy.hf_config_overrides.rope_scaling.factor=${div:${policy.max_total_sequence_length},"
      "${policy.hf_config_overrides.rope_scaling.original_max_position_embeddings}}' "
      "policy.hf_config_overrides.rope_scaling.original_max_position_embeddings=131072\n");
  EXPECT_EQ(yarn.run.config["models"]["actor"]["override_config"]["max_position_embeddings"], 262144);
  const std::string& source = yarn.run.sources.at("models.actor.override_config");
  EXPECT_NE(source.find("policy.hf_config_overrides.rope_scaling.factor"), std::string::npos) << source;
  EXPECT_EQ(yarn.graph.model(Role::kActor).spec.max_positions, 262144);
  const Read set = read_script(base + "policy.max_total_sequence_length=81920 "
                                      "policy.hf_config_overrides.max_position_embeddings=131072\n");
  EXPECT_EQ(set.graph.model(Role::kActor).spec.max_positions, 131072);
  // Without them the total is refused against the model's own 32,768 positions; an override giving none
  // is refused naming it.
  EXPECT_THROW(read_script(base + "\n"), Error);
  testing::expect_refused("nemo-rl", base,
                          {{"policy.hf_config_overrides.max_position_embeddings=0",
                            "policy.hf_config_overrides.max_position_embeddings"}});
}

TEST(NemoRlReader, MaxNewTokensAtTheTotalIsTheTotalLessThePromptsCap) {
  const std::string base =
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "policy.model_name=Qwen/Qwen2.5-7B policy.max_total_sequence_length=4096 ";
  auto note_of = [](const Read& r) {
    for (const std::string& n : r.notes)
      if (n.rfind("policy.generation.max_new_tokens: ", 0) == 0) return n;
    return std::string();
  };
  // Left at its default (the total), with a prompt cap in the data config.
  const Read capped = read_script(base + "data.max_input_seq_length=1024");
  EXPECT_EQ(capped.run.config["batch"]["prompt_len"], 1024);
  EXPECT_EQ(capped.run.config["batch"]["gen_len_max"], 3072);
  EXPECT_NE(note_of(capped).find("data.max_input_seq_length (1024)"), std::string::npos) << note_of(capped);
  // Set to the total explicitly, the cap the total too (grpo_math_1B.yaml's): the assumed length, said so.
  const Read assumed =
      read_script(base + "policy.generation.max_new_tokens=4096 data.max_input_seq_length=4096");
  EXPECT_EQ(assumed.run.config["batch"]["prompt_len"], 256);
  EXPECT_EQ(assumed.run.config["batch"]["gen_len_max"], 3840);
  EXPECT_NE(note_of(assumed).find("assumed 256 tokens a prompt"), std::string::npos) << note_of(assumed);
  EXPECT_NE(note_of(assumed).find("data.max_input_seq_length is 4096, not below it"), std::string::npos);
  EXPECT_NE(note_of(assumed).find("batch.prompt_len=P"), std::string::npos);
  // No cap anywhere: the same assumption, at most half a short sequence.
  const Read short_one = read_script(
      "uv run examples/run_grpo.py cluster.gpus_per_node=8 policy.model_name=Qwen/Qwen2.5-7B "
      "policy.max_total_sequence_length=400");
  EXPECT_EQ(short_one.run.config["batch"]["prompt_len"], 200);
  EXPECT_EQ(short_one.run.config["batch"]["gen_len_max"], 200);
  EXPECT_NE(note_of(short_one).find("data.max_input_seq_length is not set"), std::string::npos);
  // vLLM's max_model_len below the total bounds prompt and response.
  const Read model_len = read_script(base + "policy.generation.vllm_cfg.max_model_len=2048");
  EXPECT_EQ(model_len.run.config["batch"]["prompt_len"], 256);
  EXPECT_EQ(model_len.run.config["batch"]["gen_len_max"], 1792);
  EXPECT_NE(note_of(model_len).find("policy.generation.vllm_cfg.max_model_len 2048"), std::string::npos);
  // Below the total, max_new_tokens gives the prompts the rest, as before, with no note.
  const Read set = read_script(base + "policy.generation.max_new_tokens=3072");
  EXPECT_EQ(set.run.config["batch"]["prompt_len"], 1024);
  EXPECT_EQ(note_of(set), "");
}

// A recipe as NeMo-RL's are written (examples/configs/recipes/llm/*.yaml): `defaults` naming a base config
// by a path relative to the recipe, the recipe's keys over the base's, `_override_` replacing a whole
// section, interpolations; read where the launch finds it, with the command line's overrides over it.
TEST(NemoRlReader, RecipeIsReadWithTheConfigsItsDefaultsName) {
  const auto dir = std::filesystem::temp_directory_path() / "realign_nemo_rl_recipe";
  std::filesystem::create_directories(dir / "recipes" / "llm");
  std::ofstream(dir / "base.yaml") << R"(grpo:
  num_prompts_per_step: 32
  num_generations_per_prompt: 16
policy:
  model_name: Qwen/Qwen2.5-1.5B
  train_global_batch_size: 512
  train_micro_batch_size: 4
  logprob_batch_size: 4
  max_total_sequence_length: 512
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 1
    activation_checkpointing: true
  megatron_cfg:
    enabled: false
    tensor_model_parallel_size: 1
    pipeline_model_parallel_size: 1
  generation:
    max_new_tokens: ${policy.max_total_sequence_length}
    vllm_cfg:
      tensor_parallel_size: 1
    colocated:
      enabled: true
cluster:
  gpus_per_node: 1
  num_nodes: 1
)";
  std::ofstream(dir / "recipes" / "llm" / "grpo-7b-1n8g.yaml") << R"(defaults: ../../base.yaml
grpo:
  num_prompts_per_step: 64
  num_generations_per_prompt: 8
policy:
  model_name: Qwen/Qwen2.5-7B-Instruct
  max_total_sequence_length: 3072
  generation:
    max_new_tokens: 2048
    vllm_cfg:
      tensor_parallel_size: 2
  dtensor_cfg:
    _override_: true
    enabled: true
    tensor_parallel_size: 2
cluster:
  gpus_per_node: 8
)";
  const std::string script = "uv run examples/run_grpo.py --config " +
                             (dir / "recipes" / "llm" / "grpo-7b-1n8g.yaml").string() +
                             " policy.train_micro_batch_size=2\n";
  const Read r = read_script(script);
  EXPECT_EQ(r.run.config["models"]["actor"], "qwen2.5-7b");
  EXPECT_EQ(r.run.config["batch"], Json::parse(R"({"prompts": 64, "samples_per_prompt": 8, "prompt_len": 1024,
      "gen_len": 2048, "gen_len_max": 2048, "mini_batches": 1, "epochs": 1})"));
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 1, "devices_per_node": 8})"));
  auto at = [&](const std::string& call) { return r.plan.assignments[size_t(r.graph.mfc_index(call))]; };
  EXPECT_EQ(to_string(at("actor_gen").strategy), to_string(Strategy{4, 2, 1, 1}));
  // 512 a step over 4 ranks of tp 2 in the line's micro-batches of 2; the recipe's dtensor_cfg replaced the
  // base's, checkpointing with it.
  EXPECT_EQ(to_string(at("actor_train").strategy), to_string(Strategy{4, 2, 1, 64, true, false}));
  EXPECT_NE(std::find_if(r.notes.begin(), r.notes.end(),
                         [](const std::string& n) { return n.find("--config: read ") == 0; }),
            r.notes.end());
  // A base the recipe names that is not there is named.
  std::ofstream(dir / "orphan.yaml") << "defaults: missing.yaml\n";
  try {
    read_script("uv run examples/run_grpo.py --config " + (dir / "orphan.yaml").string() + "\n");
    ADD_FAILURE() << "read without its base";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), (dir / "missing.yaml").string());
  }
}

}  // namespace
}  // namespace realign
