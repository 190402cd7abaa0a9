// The mixture-of-experts MLP of one layer, as HF's sparse MoE blocks compute it (Mixtral's block_sparse_moe,
// Qwen2-MoE's and Qwen3-MoE's mlp): a router picks each token's top-k experts from a softmax over all of them
// (in fp32, renormalised over the k when MoeSpec::normalize_top_k), each expert is a SwiGLU
// down(silu(gate(x)) * up(x)), the token's output is the routing-weighted sum of its k experts' outputs, plus
// Qwen2-MoE's shared expert scaled by sigmoid(shared_gate(x)).
// Parallelism (plan/expert_parallel.h): with ep = 1 every rank holds a 1/tp slice of every expert's inner
// dimension and the partial outputs are summed over tp, like a dense MLP; with ep > 1 a rank holds E/ep whole
// experts, routes a 1/tp share of its tp group's tokens and sends each (token, expert) pair to the expert's
// rank and back by all-to-alls over the ep group.
#pragma once

#include <ATen/core/Tensor.h>

#include "comm/group.h"
#include "graph/moe_spec.h"

namespace realign::model {

struct MoeWeights {
  at::Tensor router;    // (E, H), every rank
  at::Tensor gate, up;  // (El, I', H): this rank's experts (ep = 1: all E, I' = I/tp; ep > 1: E/ep, I' = I)
  at::Tensor down;      // (El, H, I')
  at::Tensor shared_gate, shared_up;  // (Is/tp, H); undefined without a shared expert
  at::Tensor shared_down;             // (H, Is/tp)
  at::Tensor shared_scale;            // (1, H): Qwen2-MoE's shared_expert_gate
};

// Each token's k experts (N, k) int64 and their weights (N, k) in h's dtype, from h (N, H) as HF routes:
// softmax of the logits in fp32, top-k, optional renormalisation, cast back.
struct Routing {
  at::Tensor experts, weights;
};
Routing route_tokens(const MoeSpec& spec, const at::Tensor& h, const at::Tensor& router);

// The MoE MLP's output (B, T, H), replicated over tp, for the normed input h (B, T, H), replicated over tp.
// `ep` is the expert-parallel group (size 1: ep = 1). Collective over tp and ep: every rank of both calls it
// in the same order.
at::Tensor moe_mlp(const MoeSpec& spec, const MoeWeights& w, const at::Tensor& h, comm::Group& tp,
                   comm::Group& ep);

}  // namespace realign::model
