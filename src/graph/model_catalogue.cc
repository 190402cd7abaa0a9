// The built-in model shapes (`realign models`), from the models' published HF config.json files.
#include <map>

#include "graph/model_spec.h"

namespace realign {

namespace {

ModelSpec llama(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                int64_t kv_heads, int64_t vocab, int64_t max_pos, double theta) {
  ModelSpec s;
  s.name = name;
  s.family = ModelFamily::kLlama;
  s.n_layers = layers;
  s.hidden = hidden;
  s.intermediate = inter;
  s.n_heads = heads;
  s.n_kv_heads = kv_heads;
  s.head_dim = hidden / heads;
  s.vocab = vocab;
  s.max_positions = max_pos;
  s.rope_theta = theta;
  return s;
}

ModelSpec qwen25(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                 int64_t kv_heads, int64_t vocab, bool tied) {
  ModelSpec s = llama(name, layers, hidden, inter, heads, kv_heads, vocab, 32768, 1e6);
  s.family = ModelFamily::kQwen2;
  s.qkv_bias = true;
  s.tied_embeddings = tied;
  s.norm_eps = 1e-6;
  return s;
}

// Qwen3 dense (Qwen/Qwen3-0.6B ... Qwen/Qwen3-32B config.json, model_type qwen3): no biases, an RMSNorm on
// each head's query and key, head_dim 128 whatever the width, 8 KV heads, vocabulary 151,936, 40,960
// positions, rope_theta 1e6, rms_norm_eps 1e-6; the three smallest tie their embeddings.
ModelSpec qwen3(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                bool tied) {
  ModelSpec s = llama(name, layers, hidden, inter, heads, 8, 151936, 40960, 1e6);
  s.family = ModelFamily::kQwen3;
  s.head_dim = 128;
  s.qk_norm = true;
  s.tied_embeddings = tied;
  s.norm_eps = 1e-6;
  return s;
}

// A mixture-of-experts shape on a LLaMA-style trunk: every layer MoE unless `moe` says otherwise.
ModelSpec moe_model(const std::string& name, ModelFamily family, int64_t layers, int64_t hidden,
                    int64_t inter, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t vocab,
                    int64_t max_pos, double theta, MoeSpec moe) {
  ModelSpec s = llama(name, layers, hidden, inter, heads, kv_heads, vocab, max_pos, theta);
  s.family = family;
  s.head_dim = head_dim;
  s.moe = std::move(moe);
  return s;
}

MoeSpec routed(int64_t experts, int64_t k, int64_t expert_inter, bool renormalise) {
  MoeSpec m;
  m.num_experts = experts;
  m.experts_per_token = k;
  m.expert_intermediate = expert_inter;
  m.normalize_top_k = renormalise;
  return m;
}

// Qwen3-MoE (Qwen/Qwen3-30B-A3B, Qwen/Qwen3-235B-A22B config.json): softmax top-8 of 128 renormalised
// (norm_topk_prob true), every layer MoE (decoder_sparse_step 1, mlp_only_layers []), RMSNorm on q and k, no
// biases, head_dim 128, untied, rope_theta 1e6, rms_norm_eps 1e-6, 40,960 positions.
ModelSpec qwen3_moe(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                    int64_t expert_inter) {
  ModelSpec s = moe_model(name, ModelFamily::kQwen3Moe, layers, hidden, inter, heads, 4, 128, 151936, 40960,
                          1e6, routed(128, 8, expert_inter, true));
  s.qk_norm = true;
  s.norm_eps = 1e-6;
  return s;
}

// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json): 61 layers, the first 3 dense (first_k_dense_replace),
// 256 routed experts of 2048 and 1 shared, sigmoid scores with a selection bias (noaux_tc), top-8 within the
// best 4 of 8 groups, renormalised (norm_topk_prob), x2.5 (routed_scaling_factor); MLA with q_lora_rank 1536,
// kv_lora_rank 512, qk_nope/rope 128/64, v 128 over 128 heads; vocabulary 129,280; 163,840 positions (YaRN
// x40 from 4,096). The multi-token-prediction module (num_nextn_predict_layers 1) is not part of the shape:
// HF's DeepseekV3ForCausalLM does not build it, and RL engines do not train it.
ModelSpec deepseek_v3() {
  MoeSpec m = routed(256, 8, 2048, true);
  m.shared_experts = 1;
  m.shared_intermediate = 2048;
  m.first_dense_layers = 3;
  m.scoring = RouterScoring::kSigmoid;
  m.groups = 8;
  m.top_groups = 4;
  m.selection_bias = true;
  m.routed_scaling = 2.5;
  ModelSpec s = moe_model("deepseek-v3", ModelFamily::kDeepseekV3, 61, 7168, 18432, 128, 128, 192, 129280,
                          163840, 1e4, m);
  s.mla = MlaSpec{1536, 512, 128, 64, 128};
  s.norm_eps = 1e-6;
  s.rope_scaling.type = "yarn";
  s.rope_scaling.factor = 40;
  s.rope_scaling.original_max_position = 4096;
  return s;
}

ModelSpec gpt2(const std::string& name, int64_t layers, int64_t hidden, int64_t heads, int64_t vocab,
               int64_t max_pos) {
  ModelSpec s;
  s.name = name;
  s.family = ModelFamily::kGpt2;
  s.n_layers = layers;
  s.hidden = hidden;
  s.intermediate = 4 * hidden;
  s.n_heads = heads;
  s.n_kv_heads = heads;
  s.head_dim = hidden / heads;
  s.vocab = vocab;
  s.max_positions = max_pos;
  s.tied_embeddings = true;
  s.qkv_bias = true;
  return s;
}

// Shapes from the models' published HF config.json files. "llama2-34b" was never released; like ReaL we use
// CodeLlama-34B's shape (GQA with 8 KV heads, rope_theta 1e6).
const std::map<std::string, ModelSpec>& builtins() {
  static const std::map<std::string, ModelSpec> table = [] {
    std::map<std::string, ModelSpec> t;
    auto add = [&](ModelSpec s) { t.emplace(s.name, std::move(s)); };
    add(llama("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, 1e4));
    add(llama("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096, 1e4));
    add(llama("llama2-34b", 48, 8192, 22016, 64, 8, 32000, 16384, 1e6));
    add(llama("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, 1e4));
    ModelSpec l3_8 = llama("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, 5e5);
    ModelSpec l3_70 = llama("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, 5e5);
    add(l3_8);
    add(l3_70);
    add(qwen25("qwen2.5-0.5b", 24, 896, 4864, 14, 2, 151936, true));
    add(qwen25("qwen2.5-1.5b", 28, 1536, 8960, 12, 2, 151936, true));
    add(qwen25("qwen2.5-3b", 36, 2048, 11008, 16, 2, 151936, true));
    add(qwen25("qwen2.5-7b", 28, 3584, 18944, 28, 4, 152064, false));
    add(qwen25("qwen2.5-14b", 48, 5120, 13824, 40, 8, 152064, false));
    add(qwen25("qwen2.5-32b", 64, 5120, 27648, 40, 8, 152064, false));
    add(qwen25("qwen2.5-72b", 80, 8192, 29568, 64, 8, 152064, false));
    // Qwen/Qwen2-7B-Instruct config.json: Qwen2.5-7B's trunk (the same widths and vocabulary), 32,768
    // positions.
    add(qwen25("qwen2-7b", 28, 3584, 18944, 28, 4, 152064, false));
    // Qwen/Qwen2.5-Math-7B config.json: Qwen2.5-7B's trunk with 4,096 positions and rope_theta 1e4 (veRL's
    // DAPO scripts raise the positions by actor_rollout_ref.model.override_config.max_position_embeddings).
    ModelSpec math7 = qwen25("qwen2.5-math-7b", 28, 3584, 18944, 28, 4, 152064, false);
    math7.max_positions = 4096;
    math7.rope_theta = 1e4;
    add(math7);
    add(qwen3("qwen3-0.6b", 28, 1024, 3072, 16, true));
    add(qwen3("qwen3-1.7b", 28, 2048, 6144, 16, true));
    add(qwen3("qwen3-4b", 36, 2560, 9728, 32, true));
    add(qwen3("qwen3-8b", 36, 4096, 12288, 32, false));
    add(qwen3("qwen3-14b", 40, 5120, 17408, 40, false));
    add(qwen3("qwen3-32b", 64, 5120, 25600, 64, false));
    // deepseek-ai/deepseek-llm-7b-base (and -chat) config.json: a LLaMA (model_type llama) of 30 layers
    // without GQA, vocabulary 102,400, 4,096 positions, rms_norm_eps 1e-6.
    ModelSpec deepseek7 = llama("deepseek-llm-7b", 30, 4096, 11008, 32, 32, 102400, 4096, 1e4);
    deepseek7.norm_eps = 1e-6;
    add(deepseek7);
    add(gpt2("gpt2", 12, 768, 12, 50257, 1024));
    add(gpt2("gpt2-medium", 24, 1024, 16, 50257, 1024));
    // Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): 8 experts of 14336 (intermediate_size), top-2,
    // softmax renormalised over the two (HF's MixtralSparseMoeBlock always does), 32k positions, theta 1e6.
    add(moe_model("mixtral-8x7b", ModelFamily::kMixtral, 32, 4096, 14336, 32, 8, 128, 32000, 32768, 1e6,
                  routed(8, 2, 14336, true)));
    add(qwen3_moe("qwen3-30b-a3b", 48, 2048, 6144, 32, 768));
    add(qwen3_moe("qwen3-235b-a22b", 94, 4096, 12288, 64, 1536));
    add(deepseek_v3());
    // Tiny shapes for tests and CPU runs.
    add(llama("llama-tiny", 2, 64, 176, 4, 2, 256, 512, 1e4));
    add(llama("llama-small", 4, 256, 688, 8, 4, 512, 1024, 1e4));
    add(gpt2("gpt2-tiny", 2, 64, 4, 256, 256));
    ModelSpec moe_tiny = moe_model("moe-tiny", ModelFamily::kQwen3Moe, 2, 64, 176, 4, 2, 16, 256, 512, 1e4,
                                   routed(8, 2, 32, true));
    moe_tiny.qk_norm = true;
    add(moe_tiny);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& kv : builtins()) names.push_back(kv.first);
  return names;
}

ModelSpec builtin_model(const std::string& name, const std::string& path) {
  auto it = builtins().find(name);
  if (it == builtins().end()) {
    std::string known;
    for (const auto& n : builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error(path, "unknown model '" + name + "'; built-in models are " + known +
                          ", or give the path of an HF config.json");
  }
  return it->second;
}

}  // namespace realign
