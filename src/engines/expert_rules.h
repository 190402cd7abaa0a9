// Which expert-parallel degree (plan/expert_parallel.h: realign's ep folds over a stage's dp x tp ranks,
// expert tensor parallelism 1) each engine's backends can run, and Megatron's training layout, stated once
// for the adapters' strategy rules and their config writers. Sources are the engines' files named in
// docs/engines.md.
#pragma once

#include <string>

#include "graph/model_spec.h"
#include "plan/execution_plan.h"

namespace realign::engines {

// Where each rule is read (repo path), for the adapters' rules() and docs/engines.md.
inline constexpr const char* kMegatronMoeFolding = "inclusionAI/AReaL areal/api/alloc_mode.py";
inline constexpr const char* kVerlRolloutConfig = "volcengine/verl verl/workers/config/rollout.py";
inline constexpr const char* kVerlVllmServer =
    "volcengine/verl verl/workers/rollout/vllm_rollout/vllm_async_server.py";
inline constexpr const char* kVerlReplica = "volcengine/verl verl/workers/rollout/replica.py";

// Megatron-Core's MoE parallel folding with expert_tensor_parallel_size 1: ep divides the experts and the
// dp x tp ranks of a stage (world % (pp * etp * ep) == 0), the same rule as realign's. Empty when `s.ep` is
// one Megatron runs, else why not.
std::string megatron_ep_problem(const ModelSpec& spec, const Strategy& s);

// A vLLM rollout with expert parallelism as veRL launches it: each vLLM server spans tp x
// rollout.data_parallel_size GPUs and spreads the experts over all of them (expert_parallel_size = tp x
// data_parallel_size), so realign's ep group is one server: ep a multiple of tp, inside one node or whole
// nodes of `gpus_per_node`. Empty when `s.ep` fits that, else why not.
std::string vllm_ep_problem(const ModelSpec& spec, const Strategy& s, int gpus_per_node);

// The vLLM data-parallel ranks of one expert-parallel server (ep / tp; 1 without expert parallelism).
int vllm_data_parallel(const Strategy& s);

// Megatron-Core's training layout as the engines configure it: pipeline stages of equal layer counts (pp
// divides the layers), or, where a script sets the first and last stages' counts (`stage_ends`:
// num_layers_in_first/last_pipeline_stage, which realign reads, megatron_stages.h, but does not write), at
// least a layer a stage; and the experts as megatron_ep_problem folds them. Empty when `s` is one, else why
// not.
std::string megatron_layout_problem(const ModelSpec& spec, const Strategy& s, bool stage_ends = false);

// The placement option a reader sets where the script sets Megatron's first and last stages' counts.
inline constexpr const char* kPipelineStageEnds = "pipeline_stage_ends";

// Megatron's expert_tensor_parallel_size for `s`: 1 with expert parallelism (realign's folding), else tp
// (Megatron's default: the experts cut like a dense MLP).
int megatron_expert_tp(const Strategy& s);

}  // namespace realign::engines
