// The mixture-of-experts terms of the cost model beside the GEMMs (cost/layer_gemms.h): the all-to-alls that
// carry tokens to their experts and back, the load imbalance between expert-parallel ranks, the activations
// an MoE layer keeps, and the share of a rank's experts one decoding step reads.
#pragma once

#include "cost/comm_model.h"
#include "graph/model_spec.h"

namespace realign {

// The busiest rank of an expert-parallel group receives this many times the mean routed load. An
// assumption, not a measurement: capacity factors of 1.0-1.25 are what GShard (arXiv 2006.16668) and Switch
// Transformer (arXiv 2101.03961, section 2.2) provision for imbalanced routing; RL engines run drop-less
// (NeMo-RL: "All Mixture-of-expert (MoE) model training uses token drop-less"), so the busiest rank paces
// every MoE layer. With ep = 1 every rank computes its own tokens' experts and there is no imbalance.
constexpr double kExpertLoadImbalance = 1.25;
double expert_load_factor(int ep);

// One all-to-all of an ep group of consecutive devices (plan/expert_parallel.h) in which every rank sends
// `bytes_per_rank` of routed token copies, spread evenly over the group ((ep - 1) / ep of them leave the
// rank), and the busiest rank moves `load` times that. Ranks on one node exchange over NVLink, the rest over
// the GPU's own NIC ("Alltoall cannot aggregate the bandwidth of multiple NICs", NVIDIA/nccl-tests issue
// #267): `intra` is the profile's intra-node link under an all-to-all (intra_node_alltoall_link: its
// bandwidth per device and direction, a curve over message size), `inter` its inter-node link, each
// carrying its share at once; plus one message latency of the slowest link used and the host's overhead per
// collective. 0 for one rank.
double alltoall_s(double bytes_per_rank, int ep, double load, int devices_per_node, const Link& intra,
                  const Link& inter);

// Bytes of routed token copies one rank sends in one all-to-all (dispatch or combine) of an MoE layer for
// `tokens` tokens of its tp group: bf16 hidden states of its 1/tp share, k copies each.
double alltoall_bytes_per_rank(const ModelSpec& m, double tokens, int tp);

// Activation bytes an MoE layer keeps for the backward pass on the busiest rank, for `tokens` tokens of its
// tp group: Korthikanti et al.'s attention and norm terms (tokens x hidden x (10 + 8/tp), FlashAttention),
// the router's fp32 probabilities over the tokens the rank routes, the routed copies (input, gate and up
// outputs, the SwiGLU product: 2h + 6 x the inner size held bytes each, k per token, x the load), the shared
// experts (6 x their inner size / tp per token). See layer_gemms.h for which tokens and slices a rank has.
double moe_layer_activation_bytes(const ModelSpec& m, double tokens, int tp, int ep);

// Share of a rank's experts that `tokens` tokens routed within its ep group touch, each picking k of E
// experts uniformly: 1 - (1 - k/E)^tokens. A decoding step reads only these experts' weights.
double experts_touched_fraction(const ModelSpec& m, double tokens);

}  // namespace realign
