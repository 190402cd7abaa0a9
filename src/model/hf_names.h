// Hugging Face tensor names <-> realign's canonical names (graph/param_layout.h), per family.
// Mixture-of-experts layers (Mixtral: block_sparse_moe.{gate, experts.{e}.w1/w3/w2}; Qwen2-MoE / Qwen3-MoE:
// mlp.{gate, experts.{e}.gate_proj/up_proj/down_proj, shared_expert.*, shared_expert_gate}) stack each
// expert's tensor into one canonical (E, ...) tensor.
// LLaMA / Qwen2 / Mistral map one to one (model.layers.N.self_attn.q_proj.weight <-> layers.N.attn.q.weight).
// GPT-2 stores q, k and v fused in one Conv1D (transformer.h.N.attn.c_attn, weight (in, out) = (H, 3H)), and
// every Conv1D weight transposed relative to a Linear: canonical tensors are slices / transposes of HF ones.
// The value head is realign's own (value_head.weight / .bias under the same names in either direction).
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "graph/model_spec.h"

namespace realign::model {

// Where a canonical parameter lives in an HF checkpoint.
struct HfSource {
  std::string name;        // HF tensor name (GPT-2 names carry GPT2LMHeadModel's "transformer." prefix)
  bool transpose = false;  // GPT-2 Conv1D weights are stored (in, out)
  int fused_part = -1;     // GPT-2 c_attn: part q = 0, k = 1, v = 2 of the output dimension; -1: whole tensor
  int fused_parts = 0;
  // A routed-expert stack (E, ...) is E HF tensors, one per expert, in expert order (`name` is empty):
  // Mixtral's block_sparse_moe.experts.{e}.w1, Qwen's mlp.experts.{e}.gate_proj, ...
  std::vector<std::string> stacked;
};

// Throws Error naming the canonical name when the family has no such parameter.
HfSource hf_source(const ModelSpec& spec, const std::string& canonical);

// The canonical full tensor from the HF tensor `source.name` holds (a view where possible).
at::Tensor canonical_from_hf(const HfSource& source, const at::Tensor& hf_tensor);

// Full canonical parameters -> HF tensors (GPT-2: q, k, v fused back into c_attn, Conv1D weights transposed).
// A tied LM head is not written (HF ties it on load).
std::map<std::string, at::Tensor> to_hf_tensors(const ModelSpec& spec,
                                                const std::map<std::string, at::Tensor>& canonical);

// GPT-2 checkpoints exist with and without the "transformer." prefix (GPT2Model vs GPT2LMHeadModel).
std::string strip_gpt2_prefix(const std::string& hf_name);

}  // namespace realign::model
