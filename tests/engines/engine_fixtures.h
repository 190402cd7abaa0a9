// Graphs, clusters and a searched engine plan for the engines' tests.
#pragma once

#include <string>

#include "core/config_file.h"
#include "cost/simulator.h"
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
