// The parameters of a ModelSpec in realign's canonical naming, and how tensor and pipeline parallelism cut
// them. One pure description used by loading, saving, the memory model and parameter reallocation.
//
// Canonical names (all families; HF names are mapped to these at load and back at save):
//   embed.weight (V, H)             pos_embed.weight (P, H) [gpt2]
//   layers.{i}.attn_norm.{weight,bias}   layers.{i}.attn.{q,k,v}.{weight,bias}
//   layers.{i}.attn.o.{weight,bias} layers.{i}.mlp_norm.{weight,bias}
//   layers.{i}.mlp.{gate,up,down}.{weight,bias} final_norm.{weight,bias}        lm_head.weight (V, H) [untied
//   LM head]   value_head.{weight,bias} (1, H) (1)
// Biases exist only where the family has them (GPT-2: all; Qwen2: q, k, v).
// Mixture-of-experts layers replace mlp.* by (E experts of inner size I, S shared experts of inner size Is):
//   layers.{i}.moe.router.weight (E, H)  .router.bias (E) [DeepSeek's selection bias]
//   layers.{i}.moe.experts.{gate,up}.weight (E, I, H)  .experts.down.weight (E, H, I)   [split over ep, dim
//   0] layers.{i}.moe.shared.{gate,up}.weight (S*Is, H)  .shared.down.weight (H, S*Is)  .shared_gate.weight
//   (1, H)
// Qwen3 and Gemma 3 add layers.{i}.attn.{q,k}_norm.weight (head_dim); Gemma 2 and 3 add
// layers.{i}.attn_post_norm.weight and layers.{i}.mlp_post_norm.weight (H) after attention and the MLP (HF's
// post_attention_layernorm and post_feedforward_layernorm; their mlp_norm is pre_feedforward_layernorm). DeepSeek's latent attention replaces attn.{q,k,v}:
//   attn.q_a.weight (Rq, H) attn.q_a_norm.weight (Rq) attn.q_b.weight (heads*(dn+dr), Rq)  [Rq = q_lora_rank]
//   attn.kv_a.weight (Rkv+dr, H) attn.kv_a_norm.weight (Rkv) attn.kv_b.weight (heads*(dn+dv), Rkv)
//   attn.o.weight (H, heads*dv)
// An expert stack's split_dim is its inner dimension I: tensor parallelism cuts it when ep = 1; with ep > 1,
// expert parallelism gives each of ep ranks E/ep whole experts instead (plan/expert_parallel.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_spec.h"

namespace realign {

enum class HeadKind { kLanguageModel, kValue };  // value: critic / reward (one scalar per token)

struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;  // the full (unsharded) shape
  // Which pipeline stage holds it: a transformer layer index, or kEmbedding (first stage) / kHead (last stage).
  // A tied embedding used as the LM head is held by both the first and the last stage.
  static constexpr int kEmbedding = -1;
  static constexpr int kHead = -2;
  int layer = kEmbedding;
  bool tied_to_head = false;  // embed.weight of a tied model: also on the last stage
  int split_dim = -1;         // tensor-parallel split dimension; -1 = replicated on every tp rank
  int64_t split_unit = 1;     // the split keeps units of this many rows/columns together (a head's head_dim)
  bool expert = false;        // a stack of routed experts along dim 0, split over the ep ranks when ep > 1

  int64_t numel() const;
  bool operator==(const ParamInfo& o) const;
};

// All parameters in a fixed order (embedding, layers in order, final norm, head).
std::vector<ParamInfo> model_params(const ModelSpec& spec, HeadKind head);

// Half-open range [begin, end) of elements along an axis.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const Range& o) const { return begin == o.begin && end == o.end; }
};

// The common part of two ranges (empty, at max(begins), when they do not overlap).
Range intersect(const Range& a, const Range& b);

// Balanced split of `units` units over `parts`: part p holds [floor(units*p/parts), floor(units*(p+1)/parts)).
// Uneven when parts does not divide units (e.g. a 50257-token vocabulary over tp = 2).
Range balanced_part(int64_t units, int part, int parts);

// The slice of `param` along its split_dim held by tensor-parallel rank `tp_rank` of `tp_size`, in elements.
// Replicated parameters return the whole extent of dim 0.
Range tp_shard_range(const ParamInfo& param, int tp_rank, int tp_size);
std::vector<int64_t> tp_shard_shape(const ParamInfo& param, int tp_rank, int tp_size);
// The experts (dim-0 range) expert-parallel rank `ep_rank` of `ep` holds of an expert stack; the whole dim 0
// of any other parameter.
Range ep_shard_range(const ParamInfo& param, int ep_rank, int ep);

// Layers [begin, end) of pipeline stage `stage` of `pp`.
Range stage_layers(int64_t n_layers, int stage, int pp);
bool stage_holds(const ParamInfo& param, int stage, int pp, int64_t n_layers);

// Checks that a tensor-parallel degree can cut this model (divides heads and KV heads).
// Returns an empty string when it can, else the reason. `replicate_kv_heads`: as serving engines (vLLM,
// SGLang) cut attention, a tp above the KV heads holds each KV head on tp / kv_heads ranks (tp a multiple
// of the KV heads); realign's own runtime splits KV heads only.
std::string tp_incompatibility(const ModelSpec& spec, int tp, bool replicate_kv_heads = false);

}  // namespace realign
