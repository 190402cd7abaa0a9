// AReaL runs read back into a realign workload and plan: the config realign's writer writes reads back to the
// plan it was written from (as AReaL runs it), a user's YAML config and the launch line that names it read to
// the layout they run, and what realign cannot price is refused naming the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"
#include "engines/launch_config.h"
#include "engines/pricing.h"
#include "engines/script_reader.h"

namespace realign {
namespace {

using testing::h100;

// A user's GRPO config in AReaL's own style: interpolations, the older allocation_mode with a bare training
// allocation, micro-batches by token budget.
const std::string kUsersConfig = R"(experiment_name: gsm8k-grpo
trial_name: trial0
tokenizer_path: ${actor.path}
cluster:
  n_nodes: 1
  n_gpus_per_node: 8
  fileroot: /tmp/areal/experiments
allocation_mode: sglang:d4p1t1+d4p1t1
rollout:
  experiment_name: ${experiment_name}
  consumer_batch_size: ${train_dataset.batch_size}
  max_head_offpolicyness: 2
gconfig:
  n_samples: 4
  max_new_tokens: 1024
actor:
  path: Qwen/Qwen2.5-7B-Instruct
  gradient_checkpointing: true
  mb_spec:
    max_tokens_per_mb: 10240
  optimizer:
    lr: 1.70e-5
    eps: 1e-8
  kl_ctl: 0.0
  ppo_n_minibatches: 2
  recompute_logprob: true
  use_decoupled_loss: true
  scheduling_spec:
    - task_type: worker
      gpu: 1
      env_vars: {}
ref:
  path: ${actor.path}
  mb_spec:
    n_mbs: 4
  scheduling_strategy:
    type: colocation
    target: actor
train_dataset:
  batch_size: 128
  path: openai/gsm8k
  max_length: 1024
)";

void expect_same_plan(const ExecutionPlan& read, const ExecutionPlan& written) {
  ASSERT_EQ(read.assignments.size(), written.assignments.size());
  for (size_t i = 0; i < written.assignments.size(); ++i) {
    SCOPED_TRACE(written.assignments[i].mfc);
    EXPECT_EQ(read.assignments[i].mesh, written.assignments[i].mesh);
    EXPECT_EQ(to_string(read.assignments[i].strategy), to_string(written.assignments[i].strategy));
  }
}

const Strategy& strategy(const testing::ReadScript& r, const std::string& call) {
  return r.plan.assignments[size_t(r.graph.mfc_index(call))].strategy;
}

// A directory of its own with `files` written in it.
std::string write_files(const std::string& name, const std::map<std::string, std::string>& files) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("realign_areal_" + name)).string();
  std::filesystem::create_directories(dir);
  for (const auto& [file, text] : files) std::ofstream(dir + "/" + file) << text;
  return dir;
}

TEST(ArealReader, ConfigWrittenByRealignReadsBackToItsPlanAsArealRunsIt) {
  AlgorithmConfig a = testing::ppo_7b(2);
  a.reward_model = false;
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(2);
  ExecutionPlan plan;
  for (const auto& m : g.mfcs) {
    const bool gen = m.kind() == MfcKind::kGenerate;
    Strategy s = gen ? Strategy{4, 2, 1, 1} : Strategy{2, 2, 2, m.name == "ref_inf" ? 2 : 4};
    if (m.kind() == MfcKind::kTrain) s.recompute = m.name == "actor_train";
    plan.assignments.push_back({m.name, gen ? DeviceMesh{0, 8} : DeviceMesh{8, 8}, s});
  }
  const auto areal = engines::make_engine("areal");
  ASSERT_EQ(engines::can_run(*areal, g, c, plan), "");
  engines::WriteInput in;
  in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
  in.graph = &g, in.cluster = &c, in.batch = a.batch;
  in.raw_config =
      Json::parse(R"({"models": {"actor": "/ckpt/llama2-7b", "critic": "/ckpt/critic/llama2-7b"}})");
  const auto r = testing::read_script("areal", areal->launch_files(in, plan).at(0).text, "config.yaml");
  EXPECT_EQ(r.run.config["algorithm"], "ppo");
  EXPECT_EQ(r.run.config["models"]["critic"], "llama2-7b");
  EXPECT_EQ(r.run.config["train"]["staleness"], 2);
  EXPECT_EQ(r.run.config["cluster"], Json::parse(R"({"nodes": 2, "devices_per_node": 8})"));
  EXPECT_EQ(r.run.options["backend"], "megatron");
  // AReaL's actor and critic infer with their training micro-batch size: 16 sequences, so 16 micro-batches
  // of the 256 a rank holds.
  const ExecutionPlan runs = engines::as_engine_runs(plan, g, areal->pricing(g));
  EXPECT_EQ(runs.assignments[size_t(g.mfc_index("actor_inf"))].strategy.micro_batches, 16);
  expect_same_plan(r.plan, runs);
  // The KL term read back (kl_ctl, in the reward); without a ref section AReaL computes no reference
  // log-probs (rl_trainer.py: config.ref is not None), whatever kl_ctl says: none priced, and said.
  EXPECT_EQ(r.run.config["train"]["ppo"], Json::parse(R"({"kl_mode": "reward", "kl_coef": 0.02})"));
  std::string text = areal->launch_files(in, plan).at(0).text;
  const size_t ref = text.find("\nref:\n"), next = text.find("\ntrain_dataset:", ref);
  ASSERT_TRUE(ref != std::string::npos && next != std::string::npos);
  text.erase(ref, next - ref);
  const auto without = testing::read_script("areal", text, "config.yaml");
  EXPECT_EQ(without.run.config["models"]["ref"], "none");
  EXPECT_EQ(without.graph.mfc_index("ref_inf"), -1);
  EXPECT_TRUE(testing::noted(without, "ref"));
}

// On one node and on-policy, AReaL's colocated mode gives generation and training all the GPUs in turn, where
// a split gives each half: the search takes it, and what the writer writes for it reads back to the plan.
TEST(ArealReader, ColocatedPlanFoundOnOneNodeReadsBackAsWritten) {
  const AlgorithmConfig a = testing::grpo_qwen_7b();
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(1);
  const auto areal = engines::make_engine("areal");
  const auto found = testing::search(*areal, g, c, 2000);
  ASSERT_TRUE(found.search.plan.has_value());
  EXPECT_EQ(found.search.placement.name, "colocated, fsdp");
  engines::WriteInput in;
  in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
  in.graph = &g, in.cluster = &c, in.batch = a.batch, in.placement = found.search.placement;
  in.raw_config = Json::parse(R"({"models": {"actor": "/ckpt/qwen2.5-7b"}})");
  std::map<std::string, Json> written;
  for (const auto& e : areal->write_config(in, *found.search.plan)) written[e.key] = e.value;
  EXPECT_EQ(written["enable_offload"], true);
  EXPECT_EQ(written["actor.weight_update_mode"], "disk");
  EXPECT_NE(written["allocation_mode"].get<std::string>().find("|fsdp[actor]:d"), std::string::npos);
  const auto r =
      testing::read_script("areal", areal->launch_files(in, *found.search.plan).at(0).text, "config.yaml");
  EXPECT_EQ(r.run.options["colocated"], true);
  ExecutionPlan runs = engines::as_engine_runs(*found.search.plan, g, areal->pricing(g));
  // Generation waves are SGLang's own scheduling, not a setting the config carries (import adds them where
  // the KV cache needs them).
  runs.assignments[size_t(g.mfc_index("actor_gen"))].strategy.micro_batches = 1;
  expect_same_plan(r.plan, runs);
}

TEST(ArealReader, UsersConfigReadsToTheLayoutItRuns) {
  const auto r = testing::read_script("areal", kUsersConfig, "gsm8k_grpo.yaml");
  EXPECT_EQ(r.run.config["algorithm"], "grpo");
  EXPECT_EQ(r.run.config["models"]["actor"], "qwen2.5-7b");
  EXPECT_EQ(r.run.config["batch"],
            Json::parse(R"({"prompts": 128, "samples_per_prompt": 4, "prompt_len": 1024,
      "gen_len": 1024, "gen_len_max": 1024, "mini_batches": 2, "epochs": 1})"));
  EXPECT_EQ(r.run.config["train"]["staleness"], 2);
  EXPECT_EQ(r.run.options["backend"], "fsdp");  // the bare d4p1t1, as older AReaL chose it
  EXPECT_EQ(to_string(strategy(r, "actor_gen")), to_string(Strategy{4, 1, 1, 1}));
  // 512 sequences over 4 ranks in 2 steps: 64 a step, 5 of 2,048 tokens in 10,240, so 13 -> 16 micro-batches.
  EXPECT_EQ(to_string(strategy(r, "actor_train")), to_string(Strategy{4, 1, 1, 16, true, true}));
  EXPECT_EQ(strategy(r, "actor_inf").micro_batches, 32);  // the same size over a rank's 128
  // actor.kl_ctl: 0.0, so AReaL computes no reference log-probs: no reference is priced, and that is said.
  EXPECT_EQ(r.graph.mfc_index("ref_inf"), -1);
  EXPECT_TRUE(testing::noted(r, "actor.kl_ctl"));
  EXPECT_EQ(r.plan.assignments[0].mesh, (DeviceMesh{0, 4}));
  // AReaL 0.3's dotted form reads alike.
  std::string dotted = kUsersConfig;
  dotted.replace(dotted.find("sglang:d4p1t1+d4p1t1"), 20, "sglang.d4p1t1+d4p1t1");
  EXPECT_EQ(to_string(testing::read_script("areal", dotted, "old.yaml").plan.assignments[0].strategy),
            to_string(Strategy{4, 1, 1, 1}));
  EXPECT_EQ(r.plan.assignments[size_t(r.graph.mfc_index("actor_train"))].mesh, (DeviceMesh{4, 4}));
}

TEST(ArealReader, LaunchLineOverridesTheConfigItNames) {
  const std::string dir = write_files("launch", {{"gsm8k_grpo.yaml", kUsersConfig}});
  const std::string script =
      "#!/bin/bash\nexport MODEL=Qwen/Qwen3-30B-A3B\n"
      "python3 -m areal.launcher.local examples/math/gsm8k_rl.py --config " +
      dir +
      "/gsm8k_grpo.yaml \\\n"
      "  experiment_name=mine rollout.backend=sglang:d2t2 "
      "actor.backend='megatron:(attn:d2p2t1|ffn:d1p2t1e2)' \\\n"
      "  actor.path=$MODEL actor.mb_spec.max_tokens_per_mb=null actor.mb_spec.n_mbs=2\n";
  const auto r = testing::read_script("areal", script);
  EXPECT_EQ(r.run.config["models"]["actor"], "qwen3-30b-a3b");
  EXPECT_EQ(r.run.options["backend"], "megatron");
  EXPECT_EQ(to_string(strategy(r, "actor_gen")), to_string(Strategy{2, 2, 1, 1}));
  Strategy train{2, 1, 2, 2, false, true};
  train.ep = 2;
  EXPECT_EQ(to_string(strategy(r, "actor_train")), to_string(train));
  // A config beside the script is found by its name.
  const std::string beside = write_files("beside", {{"my.yaml", kUsersConfig}});
  EXPECT_EQ(
      engines::make_engine("areal")
          ->read_run("python3 -m areal.launcher.local train.py --config my.yaml", beside + "/run.sh", {})
          .config["batch"]["prompts"],
      128);
  try {
    engines::make_engine("areal")->read_run("python3 train.py --config none.yaml", beside + "/run.sh", {});
    ADD_FAILURE() << "a missing config read";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "--config");
  }
}

TEST(ArealReader, ColocatedEnginesTakeTurnsOnTheWholeNode) {
  const std::string dir = write_files("colocated", {{"base.yaml", kUsersConfig}});
  const auto r = testing::read_script(
      "areal", "python3 -m areal.infra.launcher.local --config " + dir +
                   "/base.yaml allocation_mode='sglang[rollout]:d4p1t2|fsdp[actor]:d8p1t1' "
                   "rollout.max_head_offpolicyness=0 enable_offload=true\n");
  EXPECT_EQ(r.run.options, Json::parse(R"({"backend": "fsdp", "colocated": true})"));
  EXPECT_FALSE(r.run.config.contains("train"));  // on-policy
  for (const auto& a : r.plan.assignments) EXPECT_EQ(a.mesh, (DeviceMesh{0, 8})) << a.mfc;
  EXPECT_EQ(to_string(strategy(r, "actor_gen")), to_string(Strategy{4, 2, 1, 1}));
  EXPECT_EQ(strategy(r, "actor_train").dp, 8);
}

TEST(ArealReader, WhatRealignCannotPriceIsRefusedNamingTheKey) {
  const std::string dir = write_files("refused", {{"base.yaml", kUsersConfig}});
  const std::string base = "python3 -m areal.launcher.local train.py --config " + dir + "/base.yaml ";
  EXPECT_NO_THROW(testing::read_script("areal", base + "experiment_name=x"));
  // A key the launch line writes is named with its line (issue 44, point 5); the config file's keys without.
  try {
    testing::read_script("areal", "#!/bin/bash\n" + base + "\\\n  allocation_mode=sglang:d4+fsdp:d2c2\n",
                         "run.sh");
    ADD_FAILURE() << "context parallelism read";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "allocation_mode");
    EXPECT_EQ(std::string(e.what()).rfind("run.sh:3: allocation_mode: ", 0), 0u) << e.what();
  }
  // AReaL runs vLLM eagerly unless told otherwise; priced with CUDA graphs, and said.
  EXPECT_TRUE(testing::noted(testing::read_script("areal", base + "allocation_mode=vllm:d4+fsdp:d4"),
                             "vllm.enforce_eager"));
  EXPECT_FALSE(testing::noted(
      testing::read_script("areal", base + "allocation_mode=vllm:d4+fsdp:d4 vllm.enforce_eager=false"),
      "vllm.enforce_eager"));
  testing::expect_refused(
      "areal", base,
      {
          {"allocation_mode='sglang[r]:d4|fsdp[a]:d4'", "rollout.max_head_offpolicyness"},
          {"allocation_mode='sglang[r]:d4|fsdp[a]:d8' rollout.max_head_offpolicyness=0", "allocation_mode"},
          {"allocation_mode='sglang[r]:d8|megatron[a]:d8' rollout.max_head_offpolicyness=0",
           "allocation_mode"},
          {"allocation_mode=sglang:d4+archon:d4", "allocation_mode"},
          {"allocation_mode=sglang:d4+fsdp:d2c2", "allocation_mode"},
          {"allocation_mode=sglang:d4+fsdp:d2e2", "allocation_mode"},
          {"allocation_mode=sglang:d2p2+fsdp:d4", "allocation_mode"},
          {"allocation_mode=sglang:d4+fsdp:d4+fsdp:d2", "allocation_mode"},
          {"allocation_mode=sglang:d8+fsdp:d4", "allocation_mode"},
          {"allocation_mode=sglang:d4x2+fsdp:d4", "allocation_mode"},
          {"rollout.backend=sglang:d4", "actor.backend"},
          {"rollout.backend=sglang:d4 actor.backend=fsdp:d4 ref.backend=fsdp:d2", "ref.backend"},
          {"actor.backend='megatron:(attn:d2t2|ffn:d1t2e2)' rollout.backend=sglang:d4", "actor.backend"},
          {"actor.use_lora=true", "actor.use_lora"},
          {"actor.recompute_logprob=false actor.use_decoupled_loss=false", "actor.recompute_logprob"},
          {"actor.ppo_n_minibatches=3", "actor.ppo_n_minibatches"},
          {"train_dataset.max_length=null", "train_dataset.max_length"},
          {"actor.mb_spec.n_mbs=0", "actor.mb_spec.n_mbs"},
      });
}

TEST(LaunchConfig, InterpolationsResolveThroughChainsAndTheEnvironment) {
  std::vector<engines::ConfigEntry> entries = engines::flatten_config(Json::parse(R"({
      "a": {"b": 4, "path": "${c.d}"}, "c": {"d": "${oc.env:MODEL,Qwen/Qwen2.5-7B}"},
      "n": "${a.b}", "mixed": "/runs/${a.b}/x", "loop": "${loop}", "unset": "${oc.env:NOPE}",
      "list": [1, 2]})"));
  engines::resolve_interpolations(entries, {});
  std::map<std::string, Json> v;
  for (const auto& e : entries) v[e.key] = e.value;
  EXPECT_EQ(v["a.path"], "Qwen/Qwen2.5-7B");
  EXPECT_EQ(v["n"], 4);  // typed when the reference is the whole value
  EXPECT_EQ(v["mixed"], "/runs/4/x");
  EXPECT_EQ(v["loop"], "${loop}");
  EXPECT_EQ(v["unset"], "${oc.env:NOPE}");
  EXPECT_EQ(v["list"], Json::parse("[1, 2]"));
  engines::resolve_interpolations(
      entries = engines::flatten_config(Json::parse(R"({"m": "${oc.env:MODEL}"})")), {{"MODEL", "/ckpt/m"}});
  EXPECT_EQ(entries[0].value, "/ckpt/m");
  // A resolver realign does not evaluate is named as such when read.
  try {
    const std::vector<engines::ConfigEntry> resolver = {{"policy.batch", "${mul:${a},2}"}};
    engines::LaunchSettings(resolver).integer("policy.batch", 1);
    ADD_FAILURE() << "an unevaluated resolver read";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "policy.batch");
    EXPECT_NE(std::string(e.what()).find("resolver mul"), std::string::npos) << e.what();
  }
  try {
    const std::vector<engines::ConfigEntry> resolver = {{"policy.batch", "${oc.select:a,2}"}};
    engines::LaunchSettings(resolver).integer("policy.batch", 1);
    ADD_FAILURE() << "an unevaluated resolver read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OmegaConf resolver oc.select"), std::string::npos) << e.what();
  }
  // NeMo-RL's arithmetic resolvers (nemo_rl/utils/config.py: add, mul, div, max) over numbers, once their
  // arguments resolve (NeMo-RL's gdpo gym recipe sets train_global_batch_size so; refused before).
  entries = engines::flatten_config(Json::parse(
      R"({"total": 512, "mb": 4, "tokens": "${mul:${total},${mb}}", "sum": "${add:${total},1}",
          "half": "${div:${total},2}", "most": "${max:3,${mb}}", "bad": "${mul:${nope},2}"})"));
  engines::resolve_interpolations(entries, {});
  v.clear();
  for (const auto& e : entries) v[e.key] = e.value;
  EXPECT_EQ(v["tokens"], 2048);
  EXPECT_EQ(v["sum"], 513);
  EXPECT_EQ(v["half"], 256.0);
  EXPECT_EQ(v["most"], 4);
  EXPECT_EQ(v["bad"], "${mul:${nope},2}");
}

}  // namespace
}  // namespace realign
