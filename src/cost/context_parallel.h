// Context parallelism's communication (Strategy::cp, plan/execution_plan.h): what the cp ranks of a call
// exchange in each layer so that each, holding a 1/cp share of every sequence's tokens, attends over the
// whole sequence. The rest of cp's price is the split itself (call_cost.cc: a rank's GEMMs, attention,
// activations and tp collectives over its share of the tokens; the gradient reduction and ZeRO over dp x cp
// ranks).
//
// Megatron's ring (NeMo-RL, veRL Megatron; Megatron-Core's attention through Transformer Engine's
// AttnFuncWithCPAndKVP2P): a rank keeps its queries and passes its K/V chunk around the ring of cp ranks, cp
// - 1 steps per layer in the forward pass; the backward pass sends K/V round again together with their
// gradients (2x the bytes). Each step's transfer is overlapped with the attention over the chunk received
// before it, so a step takes the longer of the two: exposed = (cp - 1) x max(0, transfer - attention / cp),
// with the rank's attention split evenly over its cp steps (Megatron gives each rank two chunks of each
// sequence, one early and one late, so that causal attention's work is balanced over the ranks and steps).
//
// DeepSpeed-Ulysses (veRL FSDP's ulysses_sequence_parallel_size): before attention an all-to-all of each of
// q, k and v trades the rank's sequence share of every head for the whole sequence of a 1/cp share of the
// heads, and one all-to-all brings the attention's output back: 4 per layer in the forward pass, as many in
// the backward; not overlapped. KV heads fewer than cp are repeated up to cp (veRL's monkey_patch.py).
//
// Not priced: the ring's receive buffers (two K/V chunks of the layer being computed) in the memory model, and
// the rows' way to the cp ranks, which moves as to dp*cp replicas (MfcAssignment::layout): each rank its
// share of the rows, the bytes a rank receives when it takes its share of each of its group's sequences.
#pragma once

#include "cost/comm_model.h"
#include "graph/model_spec.h"

namespace realign {

// Bytes of K and V one rank passes on per token of its chunk: bf16 keys and values of the heads its tp slice
// holds (latent attention's up-projected keys and values, which Megatron-Core's MLA attends over).
double ring_kv_bytes_per_token(const ModelSpec& m, int tp);

// The ring's exposed time in one layer: `kv_bytes` the rank's K/V chunk, `attention_s` the rank's attention
// time in that pass. Forward: cp - 1 steps of the chunk against attention / cp each. Backward: the chunk and
// its gradient (2 x kv_bytes) a step, against the backward's attention (pass its time). 0 for cp 1.
double ring_exposed_s(double kv_bytes, double attention_s, int cp, const Link& link, bool backward);

// One layer's Ulysses all-to-alls in one pass (forward, or backward: the same four) over `tokens` tokens of
// the rank's share. The cp group is cp ranks, tp apart (Megatron's and veRL's order: tp fastest), of which
// devices_per_node / tp share a node: `intra` is the intra-node link as an all-to-all runs on it.
double ulysses_layer_s(const ModelSpec& m, double tokens, int tp, int cp, int devices_per_node,
                       const Link& intra, const Link& inter);

}  // namespace realign
