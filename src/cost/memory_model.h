// The per-device memory model: exact parameter shard sizes from graph/param_layout.h, the training state of
// mixed-precision Adam, activations under 1F1B, the KV cache of generation and chunked logits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/dataflow_graph.h"
#include "plan/execution_plan.h"

namespace realign {

// Bytes per parameter. Mixed-precision Adam (Megatron/DeepSpeed style): bf16 weights, bf16 gradients, and an
// fp32 master copy plus fp32 Adam m and v: 2 + 2 + 12 = 16 bytes per trained parameter.
constexpr double kWeightBytesPerParam = 2.0;
constexpr double kGradBytesPerParam = 2.0;
constexpr double kOptimizerBytesPerParam = 12.0;
constexpr double kActivationBytes = 2.0;  // bf16 activations, KV cache
constexpr double kLogitBytes = 4.0;       // fp32 logits for the loss / log-probabilities
// Logits are computed this many tokens at a time (chunked LM head + loss), bounding their memory.
constexpr int64_t kLogitChunkTokens = 4096;

// Parameter elements held by each (pipeline stage, tensor-parallel rank) of a (tp, pp, ep) cut of a model.
// A mixture-of-experts model's routed experts are split over the ep ranks (plan/expert_parallel.h): every
// rank of a stage holds num_experts/ep of them, whatever its tp rank.
struct ShardSizes {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  std::vector<int64_t> numel;         // (pp * tp), index stage * tp + tp_rank: everything held
  std::vector<int64_t> expert_numel;  // (pp): of which routed experts, on a stage's (first) rank
  int64_t at(int stage, int tp_rank) const { return numel[size_t(stage) * tp + tp_rank]; }
  int64_t max() const;
  int64_t stage_max(int stage) const;  // the largest tp shard of a stage
  int64_t stage_experts(int stage) const { return expert_numel[size_t(stage)]; }
  int64_t max_experts() const;  // the most routed-expert elements of any stage
};
ShardSizes shard_sizes(const std::vector<ParamInfo>& params, int64_t n_layers, int tp, int pp, int ep = 1);

// What one device holds during a call, in bytes (the worst device of the call's mesh).
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double kv_cache = 0;
  double logits = 0;
  double total() const { return weights + gradients + optimizer + activations + kv_cache + logits; }
  double transient() const { return activations + kv_cache + logits; }  // freed after the call
  std::string describe() const;  // "weights 13.5 GiB, gradients 13.5 GiB, ..." (non-zero parts)
};

// Sequences one data-parallel rank handles: per call (generate, inference) or per optimizer step (train).
int64_t seqs_per_dp_rank(const Mfc& mfc, int dp);
// The tokens a generation call's KV cache holds per sequence (prompt and response).
double kv_cache_len(const Mfc& mfc);
int64_t seqs_per_micro_batch(const Mfc& mfc, const Strategy& s);

// Megatron's activation bytes of one transformer layer for `tokens` tokens (Korthikanti et al. 2022, eq. for
// no recompute, no sequence parallelism): tokens * hidden * (10 + 24/tp); with FlashAttention the 5as/h
// attention-score term is not stored. Used as is for SwiGLU MLPs.
double layer_activation_bytes(const ModelSpec& spec, double tokens, int tp);

// With activation recomputation a layer stores only its input (bf16, tokens x hidden) for the backward pass
// (Korthikanti et al. 2022, "full recomputation": 2sbh per layer).
double recomputed_layer_bytes(const ModelSpec& spec, double tokens);

// Optimizer state bytes per trained parameter on one device: 12 (fp32 master, m, v), over the dp x cp
// replicas with ZeRO-1; a routed expert's over the edp = dp*cp*tp/ep ranks that hold the same experts
// (Megatron's distributed optimizer shards expert parameters over the expert-data-parallel group).
double optimizer_bytes_per_param(const Strategy& s);
double expert_optimizer_bytes_per_param(const Strategy& s);

// The bytes per parameter a model keeps on its home devices between calls: its weights and, when trained, its
// gradients and optimizer state (strategy `home`'s ZeRO-1 sharding). The simulator's persistent memory and
// its out-of-memory report both price a home with it.
struct HomeBytesPerParam {
  double weights = kWeightBytesPerParam, gradients = 0, optimizer = 0, expert_optimizer = 0;
  double dense() const { return weights + gradients + optimizer; }
  double expert() const { return weights + gradients + expert_optimizer; }  // a routed expert's parameter
};
HomeBytesPerParam home_bytes_per_param(bool trained, const Strategy& home);

// Activation bytes of the layers [begin, end) of a model for `tokens` tokens: dense layers by
// layer_activation_bytes, MoE layers by moe_layer_activation_bytes (cost/moe_cost.h); and the largest of one
// layer (the one being recomputed, or the one an inference pass holds at a time).
double layers_activation_bytes(const ModelSpec& spec, int64_t begin, int64_t end, double tokens, int tp,
                               int ep);
double max_layer_activation_bytes(const ModelSpec& spec, double tokens, int tp, int ep);

// Memory of a device of each pipeline stage (its largest tp shard) during a call, and the worst of them:
// weights of the call's layout (every expert a rank holds, not only the active ones); for a train call also
// gradients and optimizer state; activations of a rank's 1/cp share of each sequence's tokens (train: 1F1B
// keeps min(pp - stage, micro_batches) micro-batches
// in flight on a stage; inference/generate: one layer's activations at a time); KV cache for generate:
// the stage's layers' ModelSpec::attended_tokens of seq_len (a sliding-window layer's at most its window) x
// ModelSpec::kv_cache_elements_per_rank x 2 bytes x seqs_per_dp; chunked fp32
// logits.
std::vector<MemoryBreakdown> stage_memory(const ModelRole& model, const Mfc& mfc, const Strategy& s,
                                          const ShardSizes& shards);
MemoryBreakdown call_memory(const ModelRole& model, const Mfc& mfc, const Strategy& s,
                            const ShardSizes& shards);

}  // namespace realign
