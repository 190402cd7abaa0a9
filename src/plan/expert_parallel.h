// Expert parallelism: how a mixture-of-experts model's routed experts are spread over a call's ranks, and
// the rules a degree `ep` must keep, stated once for validation, the search, the cost model and reallocation.
//
// Convention. ep = 1: the experts are cut by tensor parallelism like a dense MLP (each tp rank holds a 1/tp
// slice of every expert's inner dimension, replicated over dp): Megatron's default expert tensor parallelism
// (= tp), and vLLM's MoE layers without expert parallelism. ep > 1: Megatron-Core's MoE parallel folding
// (megatron/core/transformer/moe/README.md "MoE Parallel Folding", arXiv 2504.14960) with expert tensor
// parallelism 1, as NeMo-RL trains (grpo_math_1B.yaml: expert_tensor_parallel_size 1) and as vLLM spreads
// experts (expert_parallel_size = dp x tp): within each pipeline stage the attention and dense layers keep
// the dp x tp grid; the MoE layers fold the same dp*tp ranks into ep x edp, edp = dp*tp/ep. Expert-parallel
// rank of a stage's local rank l (l = dp_rank*tp + tp_rank, tp fastest) is l mod ep, so an ep group is ep
// consecutive devices (inside a node while ep fits in one). Each ep rank holds num_experts/ep whole experts
// and routes a 1/tp share of its tp group's tokens; two all-to-alls per MoE layer (dispatch, combine) carry
// every token to its k experts' ranks and back; the experts' gradients are reduced over the edp ranks that
// hold the same experts (dp of them when ep = 1).
// Rules: ep >= 1; ep = 1 for a dense model; ep divides num_experts; ep divides dp*tp.
#pragma once

#include <string>

#include "graph/model_spec.h"

namespace realign {

// Empty when `ep` can spread `spec`'s experts over a dp x tp grid, else why not (starting "ep ...").
std::string expert_parallel_problem(const ModelSpec& spec, int dp, int tp, int ep);

// The expert-data-parallel degree: ranks of a stage holding the same expert slices (dp*tp/ep; dp for ep 1).
int expert_data_parallel(int dp, int tp, int ep);

// Whether tensor parallelism cuts the experts (ep = 1) rather than expert parallelism spreading them.
inline bool experts_cut_by_tp(int ep) { return ep == 1; }

// The expert-parallel rank of a stage's local rank (dp_rank, tp_rank).
int ep_rank_of(int dp_rank, int tp_rank, int tp, int ep);

}  // namespace realign
