// Context parallelism as the engines' scripts set it: NeMo-RL's context_parallel_size (Megatron's or
// DTensor's ring), veRL's Megatron context_parallel_size (a ring) and FSDP ulysses_sequence_parallel_size
// (Ulysses), read into the layout of the calls that train and score, refused naming the key where the
// model or the GPUs cannot take it, and written back under keys the targeted releases have.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"
#include "plan/execution_plan.h"

namespace realign {
namespace {

using testing::read_script;

const std::string kNemoMegatron =
    "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B_megatron.yaml "
    "cluster.gpus_per_node=8 "
    "policy.model_name=Qwen/Qwen2.5-7B policy.max_total_sequence_length=2048 "
    "policy.generation.max_new_tokens=1536 policy.megatron_cfg.tensor_model_parallel_size=2 "
    "policy.megatron_cfg.context_parallel_size=2";

// Qwen2.5-7B-Instruct: 28 heads over 4 KV heads; 8 GPUs.
const std::string kVerl = testing::kVerlGrpoScript;

const Strategy& at(const testing::ReadScript& r, const std::string& call) {
  return r.plan.assignments[size_t(r.graph.mfc_index(call))].strategy;
}

TEST(ContextParallelScripts, NemoRlsContextParallelSizeSplitsThePolicysCalls) {
  const testing::ReadScript r = read_script("nemo-rl", kNemoMegatron);
  for (const char* call : {"actor_train", "actor_inf", "ref_inf"}) {
    SCOPED_TRACE(call);
    EXPECT_EQ(at(r, call).cp, 2);
    EXPECT_EQ(at(r, call).cp_kind, ContextParallel::kRing);
    EXPECT_EQ(at(r, call).tp, 2);
    EXPECT_EQ(at(r, call).dp, 2);  // 8 GPUs over tp 2 x cp 2
  }
  EXPECT_EQ(at(r, "actor_gen").cp, 1);
  ExecutionPlan plan = r.plan;
  EXPECT_NO_THROW(validate_plan(r.graph, r.cluster, plan, "launch.sh", true));
  // DTensor's key is read the same way.
  const testing::ReadScript d = read_script(
      "nemo-rl",
      "uv run examples/run_grpo.py --config examples/configs/grpo_math_1B.yaml cluster.gpus_per_node=8 "
      "policy.model_name=Qwen/Qwen2.5-7B policy.max_total_sequence_length=2048 "
      "policy.generation.max_new_tokens=1536 policy.dtensor_cfg.context_parallel_size=4");
  EXPECT_EQ(at(d, "actor_train").cp, 4);
  EXPECT_EQ(at(d, "actor_train").dp, 2);
}

TEST(ContextParallelScripts, VerlsUlyssesAndMegatronContextParallelismAreRead) {
  const testing::ReadScript u =
      read_script("verl", kVerl + "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=4\n");
  for (const char* call :
       {"actor_train", "actor_inf", "ref_inf"}) {  // the reference's defaults to the actor's
    SCOPED_TRACE(call);
    EXPECT_EQ(at(u, call).cp, 4);
    EXPECT_EQ(at(u, call).cp_kind, ContextParallel::kUlysses);
    EXPECT_EQ(at(u, call).dp, 2);
  }
  EXPECT_EQ(at(u, "actor_gen").cp, 1);
  // fsdp_config's key is the engine workers' only: noted, priced as the default workers run.
  const std::string engine_key = "actor_rollout_ref.actor.fsdp_config.ulysses_sequence_parallel_size";
  const testing::ReadScript e = read_script("verl", kVerl + "    " + engine_key + "=4\n");
  EXPECT_EQ(at(e, "actor_train").cp, 1);
  EXPECT_TRUE(testing::noted(e, engine_key));
  EXPECT_FALSE(testing::noted(u, engine_key));
  ExecutionPlan plan = u.plan;
  EXPECT_NO_THROW(validate_plan(u.graph, u.cluster, plan, "run.sh", true));
  // Under Ulysses veRL's token budget per GPU is for each sequence's share: x4 here (dp_actor.py).
  const testing::ReadScript dynamic =
      read_script("verl", kVerl +
                              "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=4 \\\n"
                              "    actor_rollout_ref.actor.use_dynamic_bsz=True \\\n"
                              "    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=2048\n");
  // A step's 256 samples over dp 2: 128 a rank, in micro-batches of 2048 x 4 / 1024 = 8 sequences.
  EXPECT_EQ(at(dynamic, "actor_train").micro_batches, 16);
  EXPECT_TRUE(testing::noted(dynamic, "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"));
  const std::string megatron = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer " +
                               kVerl.substr(std::string("python3 -m verl.trainer.main_ppo ").size());
  const testing::ReadScript m =
      read_script("verl", megatron +
                              "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
                              "    actor_rollout_ref.actor.megatron.context_parallel_size=2\n");
  EXPECT_EQ(at(m, "actor_train").cp, 2);
  EXPECT_EQ(at(m, "actor_train").cp_kind, ContextParallel::kRing);
  EXPECT_EQ(at(m, "ref_inf").cp, 2);  // the actor's parallel state
  EXPECT_EQ(at(m, "actor_train").dp, 2);
}

TEST(ContextParallelScripts, WhatCannotBeSplitIsRefusedNamingTheKey) {
  testing::expect_refused("verl", kVerl,
                          {
                              // Ulysses splits the 28 heads over its ranks.
                              {"    actor_rollout_ref.actor.ulysses_sequence_parallel_size=8\n",
                               "actor_rollout_ref.actor.ulysses_sequence_parallel_size"},
                              {"    actor_rollout_ref.actor.ulysses_sequence_parallel_size=3\n",
                               "actor_rollout_ref.actor.ulysses_sequence_parallel_size"},
                          },
                          "run.sh");
  try {
    read_script("verl", kVerl + "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=8\n", "run.sh");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cp 8 (Ulysses) does not divide the 28 attention heads"),
              std::string::npos)
        << e.what();
  }
  testing::expect_refused(
      "nemo-rl", kNemoMegatron,
      {{" policy.megatron_cfg.context_parallel_size=3", "policy.megatron_cfg.context_parallel_size"},
       // 256 + 1,537 tokens do not split in two.
       {" policy.max_total_sequence_length=1793 policy.generation.max_new_tokens=1537",
        "policy.megatron_cfg.context_parallel_size"}});
}

// A release's config keys (tests/engines/releases/).
std::set<std::string> release_keys(const std::string& engine_at_tag, const std::string& config) {
  std::ifstream in(std::string(REALIGN_SOURCE_DIR) + "/tests/engines/releases/" + engine_at_tag + "/" +
                   config + ".keys");
  EXPECT_TRUE(in) << engine_at_tag << "/" << config;
  std::set<std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') keys.insert(line.substr(0, line.find(' ')));
  return keys;
}

// The plan read from `script` written back by `engine`: its cp keys with their values, every key in the
// release's `config`.
void expect_written(const std::string& engine_name, const std::string& script, const std::string& config,
                    const std::vector<std::pair<std::string, int>>& cp_keys) {
  SCOPED_TRACE(engine_name + " " + config);
  const auto engine = engines::make_engine(engine_name);
  const testing::ReadScript r = read_script(engine->name(), script);
  engines::WriteInput in;
  in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
  in.graph = &r.graph;
  in.cluster = &r.cluster;
  in.batch = r.algorithm.batch;
  in.raw_config = r.run.config;
  const std::vector<engines::ConfigEntry> entries = engine->write_config(in, r.plan);
  const std::set<std::string> keys = release_keys(engine->name() + "@" + engine->release().tag, config);
  for (const engines::ConfigEntry& e : entries) EXPECT_TRUE(keys.count(e.key)) << e.key;
  for (const auto& [key, value] : cp_keys) {
    bool found = false;
    for (const engines::ConfigEntry& e : entries) found |= e.key == key && e.value == value;
    EXPECT_TRUE(found) << key << " " << value;
  }
}

TEST(ContextParallelScripts, WrittenBackUnderTheReleasesKeys) {
  expect_written("nemo-rl", kNemoMegatron, "grpo_math_1B_megatron",
                 {{"policy.megatron_cfg.context_parallel_size", 2}});
  const std::string ulysses = kVerl + "    actor_rollout_ref.actor.ulysses_sequence_parallel_size=4\n";
  const std::string megatron = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer " +
                               kVerl.substr(std::string("python3 -m verl.trainer.main_ppo ").size()) +
                               "    actor_rollout_ref.actor.megatron.context_parallel_size=2\n";
  for (const std::string verl : {"verl", "verl@v0.7.0"}) {
    expect_written(verl, ulysses, "ppo_trainer",
                   {{"actor_rollout_ref.actor.ulysses_sequence_parallel_size", 4},
                    {"actor_rollout_ref.ref.ulysses_sequence_parallel_size", 4}});
    expect_written(verl, megatron, "ppo_megatron_trainer",
                   {{"actor_rollout_ref.actor.megatron.context_parallel_size", 2},
                    {"actor_rollout_ref.ref.megatron.context_parallel_size", 2}});
  }
}

}  // namespace
}  // namespace realign
