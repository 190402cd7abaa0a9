#include "engines/expert_rules.h"

#include "plan/expert_parallel.h"

namespace realign::engines {

std::string megatron_ep_problem(const ModelSpec& spec, const Strategy& s) {
  return expert_parallel_problem(spec, s.replicas(), s.tp, s.ep);
}

std::string vllm_ep_problem(const ModelSpec& spec, const Strategy& s, int gpus_per_node) {
  if (std::string why = expert_parallel_problem(spec, s.replicas(), s.tp, s.ep); !why.empty()) return why;
  if (s.ep == 1) return "";
  // vLLM has no expert-parallel size of its own: --enable-expert-parallel spreads the experts over every
  // rank of the server, its data-parallel ranks times its tensor-parallel ranks.
  if (s.ep % s.tp != 0)
    return "vLLM spreads the experts over a whole server (expert_parallel_size = tp x data_parallel_size): "
           "ep " +
           std::to_string(s.ep) + " is not a multiple of tp " + std::to_string(s.tp);
  // replica.py: a server's GPUs are part of one node or whole nodes.
  const int per_node = gpus_per_node;
  // With expert parallelism veRL lays a server's data-parallel ranks out node by node and asserts that its
  // tp divides a node (verl/workers/rollout/vllm_rollout/vllm_async_server.py, b178a3c:308-310, v0.7.0:
  // 327-329), so only a server without expert parallelism runs its tp across nodes.
  if (per_node % s.tp != 0)
    return "tp " + std::to_string(s.tp) +
           " with expert parallelism: veRL's vLLM server asserts "
           "gpus_per_node % tensor_model_parallel_size == 0 (" +
           std::to_string(per_node) + " GPUs per node)";
  if (s.ep > per_node ? s.ep % per_node != 0 : per_node % s.ep != 0)
    return "a vLLM server of " + std::to_string(s.ep) +
           " GPUs is neither inside one node nor whole nodes of " + std::to_string(per_node);
  return "";
}

int vllm_data_parallel(const Strategy& s) { return s.ep > 1 ? s.ep / s.tp : 1; }

std::string megatron_layout_problem(const ModelSpec& spec, const Strategy& s, bool stage_ends) {
  if (!stage_ends && spec.n_layers % s.pp != 0)
    return "Megatron stages hold equal layer counts: pp must divide the layers";
  if (s.pp > spec.n_layers) return "pp " + std::to_string(s.pp) + " exceeds the model's layers";
  return megatron_ep_problem(spec, s);
}

int megatron_expert_tp(const Strategy& s) { return s.ep > 1 ? 1 : s.tp; }

}  // namespace realign::engines
