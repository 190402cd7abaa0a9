// MoeSpec and MlaSpec: the mixture-of-experts and multi-head latent attention parts of a model's shape, as HF
// defines them for Mixtral, Qwen2-MoE / Qwen3-MoE and DeepSeek-V3. Plain data the planner prices; the runtime
// runs the softmax-routed ones, not DeepSeek-V3's (runtime_model_problem, graph/model_spec.h, says which).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace realign {

// How a router turns its logits into the weights of the k experts it picks (HF's modeling code per family):
// - kSoftmax: softmax over all experts, top-k of the probabilities (Mixtral, Qwen2-MoE, Qwen3-MoE);
// - kSigmoid: sigmoid per expert, top-k of score + a per-expert bias that only steers the choice, within the
//   best `top_groups` of `groups` expert groups (DeepSeek-V3's noaux_tc).
// `normalize_top_k` renormalises the k weights to sum to 1 (Mixtral always; Qwen and DeepSeek by
// norm_topk_prob); `routed_scaling` multiplies them (DeepSeek's routed_scaling_factor).
enum class RouterScoring { kSoftmax, kSigmoid };

struct MoeSpec {
  int64_t num_experts = 0;          // routed experts of each MoE layer; 0: a dense model
  int64_t experts_per_token = 0;    // k
  int64_t expert_intermediate = 0;  // each routed expert's SwiGLU inner size (moe_intermediate_size)
  int64_t shared_experts = 0;       // always-on experts beside the routed ones (DeepSeek; Qwen2-MoE's one)
  int64_t shared_intermediate = 0;  // inner size of each shared expert
  bool shared_expert_gate = false;  // Qwen2-MoE: sigmoid(Linear(hidden -> 1)) scales the shared expert
  // Layer i is an MoE layer when i >= first_dense_layers, (i + 1) % sparse_step == 0 and i is not listed in
  // dense_layers (HF: DeepSeek's first_k_dense_replace; Qwen's decoder_sparse_step and mlp_only_layers). The
  // other layers keep a dense SwiGLU MLP of ModelSpec::intermediate.
  int64_t first_dense_layers = 0;
  int64_t sparse_step = 1;
  std::vector<int64_t> dense_layers;
  RouterScoring scoring = RouterScoring::kSoftmax;
  bool normalize_top_k = false;
  int64_t groups = 1;           // DeepSeek n_group
  int64_t top_groups = 1;       // DeepSeek topk_group
  bool selection_bias = false;  // DeepSeek-V3: e_score_correction_bias, one per expert
  double routed_scaling = 1.0;

  bool enabled() const { return num_experts > 0; }
  bool is_moe_layer(int64_t layer) const;
  int64_t moe_layers_in(int64_t begin, int64_t end) const;  // MoE layers among [begin, end)
  bool operator==(const MoeSpec& o) const;
};

// "softmax top-8 of 128, renormalised" or "sigmoid + bias, top-8 of 256 in the best 4 of 8 groups,
// renormalised, x2.5".
std::string describe_router(const MoeSpec& moe);

// DeepSeek's multi-head latent attention: queries through a rank-q_lora_rank bottleneck (0: projected
// directly), keys and values from one kv_lora_rank latent (cached with the shared rotary key part); each head
// has qk_nope_head_dim + qk_rope_head_dim query/key dimensions and v_head_dim value dimensions.
struct MlaSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;  // 0: standard attention
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
  int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const MlaSpec& o) const;
};

}  // namespace realign
