// Small graphs and clusters shared by the planner's tests.
#pragma once

#include "core/config_file.h"
#include "graph/algorithms.h"
#include "plan/cluster.h"

namespace realign::testing {

inline DataflowGraph graph_from_yaml(const std::string& yaml) {
  Json j = parse_yaml(yaml, "test.yaml");
  ObjectReader root(j, "");
  AlgorithmConfig c = algorithm_config_from_json(root);
  root.finish();
  return build_graph(c);
}

inline DataflowGraph ppo_7b() {
  return graph_from_yaml(R"(
algorithm: ppo
models: {actor: llama2-7b, critic: llama2-7b}
batch: {prompts: 512, prompt_len: 128, gen_len: 384, mini_batches: 4}
)");
}

// GRPO with Qwen3-30B-A3B (128 experts) in NeMo-RL's published batch: 64 prompts x 32 samples, 4 steps.
inline DataflowGraph grpo_qwen3_30b(int64_t gen_len = 2898) {
  return graph_from_yaml(R"(
algorithm: grpo
models: {actor: qwen3-30b-a3b}
batch: {prompts: 64, samples_per_prompt: 32, prompt_len: 256, mini_batches: 4, gen_len: )" +
                         std::to_string(gen_len) + "}");
}

inline Cluster h100(int nodes, int per_node = 8) {
  return Cluster{nodes, per_node, builtin_device("h100-sxm", "cluster.device")};
}

}  // namespace realign::testing
