// Transformer: the decoder of every supported family (LLaMA / Qwen2 / Mistral / GPT-2, and the
// mixture-of-experts Mixtral / Qwen2-MoE / Qwen3-MoE, whose MoE layers are model/moe.h), holding only this
// rank's tensor-parallel shards of this pipeline stage's layers as leaf tensors (requires_grad), named by
// canonical names (graph/param_layout.h). Column-parallel q/k/v/gate/up (GPT-2's fc), row-parallel o/down,
// vocabulary-parallel embedding and LM head, with Megatron's f/g pairs (model/tp_ops.h) at the boundaries.
// Activations are in the parameters' dtype; norms, softmax, log-probs and values are computed in fp32.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "comm/group.h"
#include "graph/param_layout.h"
#include "model/kv_cache.h"
#include "model/moe.h"
#include "model/rope.h"
#include "model/token_batch.h"

namespace realign::model {

struct ParallelContext {
  // A constructor rather than an aggregate, so callers without experts keep writing {tp, stage, n_stages}.
  ParallelContext(std::shared_ptr<comm::Group> tp_group = nullptr, int stage_index = 0, int stages = 1,
                  std::shared_ptr<comm::Group> ep_group = nullptr)
      : tp(std::move(tp_group)), stage(stage_index), n_stages(stages), ep(std::move(ep_group)) {}
  std::shared_ptr<comm::Group> tp;  // nullptr = single_rank_group()
  int stage = 0, n_stages = 1;
  // The expert-parallel group of an MoE model (comm::expert_ranks; its rank is this rank's ep rank); nullptr:
  // ep = 1, the experts cut by tp.
  std::shared_ptr<comm::Group> ep;
};

class Transformer {
 public:
  // Parameters start at zero; fill them with load_shards (or init_rank_params + load_shards). Throws Error
  // when the tp degree cannot cut the model or the stage is out of range.
  Transformer(ModelSpec spec, HeadKind head, ParallelContext parallel, at::ScalarType dtype,
              at::Device device);

  const ModelSpec& spec() const { return spec_; }
  HeadKind head() const { return head_; }
  const ParallelContext& parallel() const { return parallel_; }
  comm::Group& tp() const { return *parallel_.tp; }
  comm::Group& ep() const { return *parallel_.ep; }
  bool first_stage() const { return parallel_.stage == 0; }
  bool last_stage() const { return parallel_.stage == parallel_.n_stages - 1; }
  at::ScalarType dtype() const { return dtype_; }
  at::Device device() const { return device_; }
  // The global layer indices [begin, end) this stage runs.
  Range layers() const { return layers_; }

  // Canonical name -> this rank's shard (leaf, requires_grad).
  std::map<std::string, at::Tensor>& named_params() { return params_; }
  const std::map<std::string, at::Tensor>& named_params() const { return params_; }
  std::vector<at::Tensor> parameters() const;
  // The ParamInfo of every parameter held here.
  const std::vector<ParamInfo>& param_infos() const { return infos_; }
  // Copies shards in (converted to this model's dtype and device). `strict`: every held parameter must be
  // given and nothing else; otherwise names not held are ignored and absent ones kept. Throws Error naming
  // the parameter on a missing name or a shape mismatch.
  void load_shards(const std::map<std::string, at::Tensor>& shards, bool strict = true);

  // First stage: embeds batch.tokens (hidden_in ignored); other stages take hidden_in (B, T, H). Returns the
  // hidden state after this stage's layers, after the final norm on the last stage.
  at::Tensor forward_stage(const TokenBatch& batch, const at::Tensor& hidden_in = at::Tensor());
  // The whole model; needs n_stages == 1.
  at::Tensor forward(const TokenBatch& batch);

  // Last stage, language-model head. (B, T) fp32 log-probability of `targets` (B, T) int64 and, when
  // `entropy` is given, the entropy of each position's distribution. Vocabulary-parallel over tp and chunked
  // over tokens: each step holds at most `chunk_elements` fp32 logits of this rank's vocabulary slice.
  // Targets outside [0, vocab) are an error; mask unused positions afterwards.
  at::Tensor token_logprobs(const at::Tensor& hidden, const at::Tensor& targets,
                            at::Tensor* entropy = nullptr, int64_t chunk_elements = int64_t(1) << 24);
  // Full-vocabulary logits (B, T, V) fp32, gathered over tp (for generation and tests).
  at::Tensor logits(const at::Tensor& hidden);
  // Last stage, value head: (B, T) fp32.
  at::Tensor values(const at::Tensor& hidden);

  // Incremental forward of this stage for generation: tokens (B, Tq) written into cache slots
  // [cache.length, +Tq) (or cache.write_slots, when defined) with `valid` (B, Tq) bool marking real tokens
  // and `positions` (B, Tq); advances cache.length. The first stage embeds `tokens` (hidden_in ignored);
  // other stages take hidden_in (B, Tq, H) from the stage before and ignore `tokens`. Returns this stage's
  // output (B, Tq, H), after the final norm on the last stage.
  at::Tensor forward_cached(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& valid,
                            KvCache& cache, const at::Tensor& hidden_in = at::Tensor());
  // An empty cache for `batch` rows and `capacity` slots on this model's device and dtype.
  KvCache make_cache(int64_t batch, int64_t capacity) const;

 private:
  struct Layer {
    at::Tensor attn_norm_w, attn_norm_b, q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
    at::Tensor q_norm_w, k_norm_w;  // Qwen3: RMSNorm of each head's query and key
    at::Tensor mlp_norm_w, mlp_norm_b, gate_w, up_w, up_b, down_w, down_b;
    bool moe = false;
    MoeWeights experts;
  };
  at::Tensor embed(const at::Tensor& tokens, const at::Tensor& positions);
  at::Tensor norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) const;
  at::Tensor attention_block(const Layer& l, const at::Tensor& x, const RopeTables& rope,
                             const at::Tensor& mask, KvCache* cache, int64_t local_layer);
  at::Tensor mlp_block(const Layer& l, const at::Tensor& x);
  at::Tensor run_layers(at::Tensor x, const at::Tensor& positions, const at::Tensor& mask, KvCache* cache);
  const at::Tensor& head_weight() const;
  at::Tensor param(const std::string& name) const;

  ModelSpec spec_;
  HeadKind head_;
  ParallelContext parallel_;
  at::ScalarType dtype_;
  at::Device device_;
  Range layers_;
  std::vector<ParamInfo> infos_;
  std::map<std::string, at::Tensor> params_;
  std::vector<Layer> layer_params_;     // local layers in order
  int64_t q_heads_ = 0, kv_heads_ = 0;  // per tp rank
  Range vocab_;                         // this rank's vocabulary slice
  std::vector<int64_t> vocab_sizes_;    // every tp rank's vocabulary slice size
  at::Tensor inv_freq_;                 // RoPE (non-GPT-2), on device_
};

}  // namespace realign::model
