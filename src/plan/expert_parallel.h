// Expert parallelism: how a mixture-of-experts model's routed experts are spread over a call's ranks, and
// the rules a degree `ep` must keep, stated once for validation, the search, the cost model and reallocation.
//
// Convention (Megatron-Core's MoE parallel folding, megatron/core/transformer/moe/README.md "MoE Parallel
// Folding", arXiv 2504.14960, with expert tensor parallelism 1): within each pipeline stage, the attention
// and dense layers use the dp x tp grid as for a dense model; the MoE layers fold the same dp*tp ranks into
// ep x edp, edp = dp*tp/ep. Expert-parallel rank r of a stage's local rank l (l = dp_rank*tp + tp_rank, tp
// fastest) is l mod ep, so an ep group is ep consecutive devices (inside a node while ep fits in one). Each
// ep rank holds num_experts/ep whole experts (tensor parallelism does not cut an expert); every token picks
// its k experts and is sent to their ranks and back by two all-to-alls per MoE layer (dispatch, combine);
// the experts' gradients are reduced over the edp ranks that hold the same experts.
// Rules: ep >= 1; ep = 1 for a dense model; ep divides num_experts; ep divides dp*tp.
#pragma once

#include <string>

#include "graph/model_spec.h"

namespace realign {

// Empty when `ep` can spread `spec`'s experts over a dp x tp grid, else why not (starting "ep ...").
std::string expert_parallel_problem(const ModelSpec& spec, int dp, int tp, int ep);

// The expert-data-parallel degree: ranks of a stage holding the same experts (dp*tp/ep).
int expert_data_parallel(int dp, int tp, int ep);

// The expert-parallel rank of a stage's local rank (dp_rank, tp_rank).
int ep_rank_of(int dp_rank, int tp_rank, int tp, int ep);

}  // namespace realign
