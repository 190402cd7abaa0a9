// One pipeline stage's share of a call, the pieces call_cost.cc composes calls from: a stage's forward and
// backward over a micro-batch (matmuls, attention, the tensor-parallel collectives, launches), the hand-offs
// between stages, and a pipelined forward pass over micro-batches.
#pragma once

#include "cost/call_cost.h"
#include "cost/comm_model.h"

namespace realign::detail {

// Time of one stage processing one micro-batch once through its layers (forward), split into parts.
struct StageCost {
  double compute = 0;
  double comm = 0;
  double overhead = 0;
  double total() const { return compute + comm + overhead; }
};

// What one call is priced with: its model and strategy, the profile, and the links its tp, pp and dp groups
// (and an ep group's all-to-all) use at the node's load during the call (call_cost.cc sets them).
struct CallContext {
  const ModelRole& model;
  const Strategy& s;
  const HardwareProfile& p;
  const ShardSizes& shards;
  Link tp_link, pp_link, dp_link;
  MfcOp op;
  Link intra, inter;  // an ep group's all-to-all uses both (moe_cost.h); intra as an all-to-all runs on it
  int devices_per_node = 1;
  Link cp_link;  // a context-parallel ring's hop (cost/context_parallel.h)
  MfcKind kind() const { return kind_of(op); }
  // Achieved FLOP/s of a matmul over `rows` tokens (small GEMMs are far from peak) multiplying over `depth`
  // inputs (short inner loops too), and of attention over sequences of `seq_len` tokens.
  double gemm_rate(double rows, double depth) const {
    return p.peak_flops.value * p.gemm_efficiency.at(rows) * p.gemm_depth_efficiency.at(depth);
  }
  double attn_rate(double seq_len) const { return p.peak_flops.value * p.attention_efficiency.at(seq_len); }
  // Achieved bytes/s of a memory-bound pass reading `bytes`.
  double mem_rate(double bytes) const {
    return p.memory_bandwidth.value * p.decode_bandwidth_efficiency.at(bytes);
  }
};

// Forward of `tokens` tokens (context `context`) through stage `stage`, `head_tokens` of them through the
// head. A batched pass (not a decoding step) runs at the engine's share of its kernels' rates.
StageCost stage_forward(const CallContext& c, int stage, double tokens, double context, double head_tokens,
                        bool decoding = false);

// Context parallelism's exchanges in one stage's forward pass (or `backward` pass) over `tokens` tokens, a
// rank's share, at mean context `context`: the K/V ring's exposed time or Ulysses's all-to-alls, every layer
// (cost/context_parallel.h); 0 for cp 1.
double stage_context_parallel_s(const CallContext& c, int stage, double tokens, double context,
                                bool backward);

// The tensor-parallel collectives of a stage's backward pass: Megatron's f (all-reduce of the input gradient)
// before attention and MLP of each layer, and before a language-model head.
double stage_backward_comm_s(const CallContext& c, int stage, double tokens);

// One activation of `tokens` tokens crossing a stage boundary (0 without pipeline parallelism).
double pp_handoff_s(const CallContext& c, double tokens);

// What a stage of a forward-only pipeline pays for one of its sends: the runtime sends asynchronously and
// posts its receives ahead (runtime/pipeline_forward.cc, pipeline_generate.cc), so a stage issues a send and
// goes on with its next micro-batch; the transfer itself delays only a micro-batch that waits for it, where
// the pipeline fills (pp - 1 boundaries), not every slot. Assumes a transfer is shorter than a slot.
double pp_issue_s(const CallContext& c);

// Adds `times` x the stage's parts to the call's.
void add_stage(CallEstimate& e, const StageCost& sc, double times);

// A pipelined forward pass over micro-batches: (micro_batches + pp - 1) slots of the slowest stage, and the
// first micro-batch's activation crossing the pp - 1 stage boundaries.
void pipelined_forward(const CallContext& c, CallEstimate& e, double mb_tokens, double context,
                       double head_tokens);

}  // namespace realign::detail
