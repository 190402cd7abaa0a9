// The mixture-of-experts and latent-attention fields of an HF config.json, per family (Mixtral, Qwen2-MoE,
// Qwen3-MoE, DeepSeek-V2, DeepSeek-V3), read into ModelSpec::moe / mla and written back. A field the family's
// HF code does not define, or a router it does not implement, is refused by name: a planner that silently
// ignored a MoE field would price a model that is not the one configured.
#pragma once

#include <string>

#include "core/json.h"
#include "graph/model_spec.h"

namespace realign::hf {

bool is_moe_family(ModelFamily family);

// Reads the MoE (and, for DeepSeek-V2/V3, MLA) fields of `c` into `s`, whose trunk is read already.
void read_moe_fields(const Json& c, const std::string& path, ModelSpec& s);

// A dense family's config with a mixture-of-experts field (num_experts, n_routed_experts, ...): refused,
// naming the field and the model types that have them.
void refuse_moe_fields(const Json& c, const std::string& path, ModelFamily family);

void write_moe_fields(const ModelSpec& s, Json& c);

}  // namespace realign::hf
