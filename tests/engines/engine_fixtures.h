// Graphs, clusters, a searched engine plan and launch scripts read as import reads them, for engine tests.
// tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/config_file.h"
#include "core/error.h"
#include "cost/simulator.h"
#include "engines/engine.h"
#include "engines/engine_search.h"
#include "graph/algorithms.h"

namespace realign::testing {

inline AlgorithmConfig algorithm_from_yaml(const std::string& yaml) {
  Json j = parse_yaml(yaml, "test.yaml");
  ObjectReader root(j, "");
  AlgorithmConfig c = algorithm_config_from_json(root);
  root.finish();
  return c;
}

// PPO with a 7B actor, critic, reference and reward model (the shipped 16-GPU example's shapes).
inline AlgorithmConfig ppo_7b(int64_t staleness = 0) {
  AlgorithmConfig c = algorithm_from_yaml(R"(
algorithm: ppo
models: {actor: llama2-7b, critic: llama2-7b}
batch: {prompts: 512, prompt_len: 256, gen_len: 768, mini_batches: 4}
)");
  c.staleness = staleness;
  if (staleness > 0) c.recompute_logprobs = true;
  return c;
}

// GRPO with Qwen3-30B-A3B and a verifier: the shipped mixture-of-experts example's algorithm and batch
// (examples/grpo_qwen3_30b_a3b_32xh100.yaml).
inline AlgorithmConfig qwen3_moe_grpo() {
  AlgorithmConfig a = algorithm_from_yaml(R"(
algorithm: grpo
models: {actor: qwen3-30b-a3b}
batch: {prompts: 64, samples_per_prompt: 32, prompt_len: 256, gen_len: 2898, mini_batches: 4}
)");
  a.reward_model = false;
  return a;
}

// GRPO with a 7B policy and a verifier, 256 prompts x 5 samples of 1k + 1k tokens, log-probs recomputed: the
// workload of the shipped veRL, AReaL and OpenRLHF example scripts (examples/*_qwen2.5_7b_8xh100.*).
inline AlgorithmConfig grpo_qwen_7b(int64_t staleness = 0) {
  AlgorithmConfig a = algorithm_from_yaml(R"(
algorithm: grpo
models: {actor: qwen2.5-7b}
batch: {prompts: 256, samples_per_prompt: 5, prompt_len: 1024, gen_len: 1024, mini_batches: 4}
)");
  a.reward_model = false;
  a.staleness = staleness;
  a.recompute_logprobs = true;
  return a;
}

// A veRL GRPO launch of Qwen2.5-7B-Instruct (28 heads over 4 KV heads) on one node of 8 GPUs, FSDP, over 7
// lines ending in a continuation: a test appends its own settings from line 8 on.
inline const std::string kVerlGrpoScript =
    "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\\n"
    "    data.train_batch_size=256 actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n"
    "    actor_rollout_ref.actor.ppo_mini_batch_size=64 actor_rollout_ref.rollout.n=4 \\\n"
    "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
    "    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \\\n"
    "    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 actor_rollout_ref.actor.use_kl_loss=True "
    "\\\n"
    "    trainer.n_gpus_per_node=8 trainer.nnodes=1 \\\n";

inline Cluster h100(int nodes, int per_node = 8) {
  return Cluster{nodes, per_node, builtin_device("h100-sxm", "cluster.device")};
}

// OpenRLHF's documented split of PPO on 2 x 8 GPUs: vLLM (4 engines of tp 2) on 0-7, actor and reference on
// 8-11, critic and reward model on 12-15, ZeRO data parallelism with 8 training and 4 inference
// micro-batches.
inline ExecutionPlan openrlhf_split(const DataflowGraph& g, bool checkpointing) {
  ExecutionPlan plan;
  for (const auto& m : g.mfcs) {
    const bool actor_side = m.name == "actor_train" || m.name == "actor_inf" || m.name == "ref_inf";
    const DeviceMesh mesh = m.name == "actor_gen" ? DeviceMesh{0, 8} : DeviceMesh{actor_side ? 8 : 12, 4};
    Strategy s = m.name == "actor_gen"         ? Strategy{4, 2, 1, 1}
                 : m.kind() == MfcKind::kTrain ? Strategy{4, 1, 1, 8, true, checkpointing}
                                               : Strategy{4, 1, 1, 4};
    plan.assignments.push_back({m.name, mesh, s});
  }
  return plan;
}

// A launch script's run as `realign import` builds it: the engine reads the script, its workload's graph on
// H100s, then its layout.
struct ReadScript {
  engines::ReadRun run;
  AlgorithmConfig algorithm;
  DataflowGraph graph;
  Cluster cluster;
  ExecutionPlan plan;
  std::vector<std::string> notes;
};

inline ReadScript read_script(const std::string& engine, const std::string& script,
                              const std::string& file = "launch.sh") {
  ReadScript r;
  r.run = engines::make_engine(engine)->read_run(script, file, {});
  Json config = r.run.config;
  ObjectReader root(config, "");
  r.algorithm = algorithm_config_from_json(root);
  r.algorithm.reward_model = config["reward"]["kind"] == "model";
  if (config.contains("train")) {
    r.algorithm.staleness = config["train"].value("staleness", int64_t{0});
    r.algorithm.staleness_share = config["train"].value("staleness_share", 1.0);
  }
  r.graph = build_graph(r.algorithm);
  r.cluster = h100(config["cluster"]["nodes"].get<int>(), config["cluster"]["devices_per_node"].get<int>());
  r.notes = r.run.notes;
  r.plan = r.run.plan(r.graph, r.cluster, r.notes);
  return r;
}

// Whether the reader noted `key` ("key: what realign prices otherwise").
inline bool noted(const ReadScript& r, const std::string& key) {
  for (const std::string& n : r.notes)
    if (n.rfind(key + ": ", 0) == 0) return true;
  return false;
}

// Each of `cases` ({settings appended to `base`, the key the error must name}) is refused naming its key.
inline void expect_refused(const std::string& engine, const std::string& base,
                           const std::vector<std::pair<std::string, std::string>>& cases,
                           const std::string& file = "launch.sh") {
  for (const auto& [settings, key] : cases) {
    SCOPED_TRACE(settings);
    try {
      read_script(engine, base + settings, file);
      ADD_FAILURE() << "read without complaint";
    } catch (const Error& e) {
      EXPECT_EQ(e.path(), key) << e.what();
    }
  }
}

struct EnginePlan {
  engines::EngineSearchResult search;
  engines::EngineEstimate estimate;
};

// The engine's searched plan with a small, fixed step budget (repeatable).
inline EnginePlan search(const engines::Engine& engine, const DataflowGraph& g, const Cluster& c,
                         int64_t steps = 400) {
  Simulator sim(g, c, builtin_profile(c.device));
  engines::EngineEvaluator ev(sim, engine.pricing(g), true);
  PlanOptions o;
  o.search.max_steps = steps;
  o.search.time_budget_s = 60;
  EnginePlan out;
  out.search = engines::search_engine_plan(engine, g, c, ev, o);
  if (out.search.plan) out.estimate = ev.estimate(*out.search.plan);
  return out;
}

}  // namespace realign::testing
