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

// gpt-oss (openai/gpt-oss-20b, openai/gpt-oss-120b config.json, model_type gpt_oss): 2880 wide, 64 query
// heads of 64 over 8 KV heads, q, k and v biased, every other layer local over a 128-token window (layer 0
// first), every layer MoE with experts of 2880 (intermediate_size), top-4 by a softmax over the chosen
// logits, vocabulary 201,088, 131,072 positions (YaRN x32 from 4,096), rope_theta 150,000, rms_norm_eps
// 1e-5, untied. Not part of the shape (and not priced): the attention sinks, the experts' and the output
// projection's biases, the clamped SwiGLU (swiglu_limit); the runtime does not build it.
ModelSpec gpt_oss(const std::string& name, int64_t layers, int64_t experts) {
  ModelSpec s = moe_model(name, ModelFamily::kGptOss, layers, 2880, 2880, 64, 8, 64, 201088, 131072, 150000,
                          routed(experts, 4, 2880, true));
  s.qkv_bias = true;
  s.sliding_window = 128;
  s.sliding_window_pattern = 2;
  s.rope_scaling.type = "yarn";
  s.rope_scaling.factor = 32;
  s.rope_scaling.original_max_position = 4096;
  return s;
}

// DeepSeek-V2's and V3's attention and positions (their config.json): latent attention with kv_lora_rank
// 512, qk_nope/rope head dims 128/64 and v 128 (queries through a rank-`q_lora` projection, or directly at
// 0), rms_norm_eps 1e-6, YaRN x40 from 4,096 positions.
ModelSpec with_deepseek_attention(ModelSpec s, int64_t q_lora) {
  s.mla = MlaSpec{q_lora, 512, 128, 64, 128};
  s.norm_eps = 1e-6;
  s.rope_scaling.type = "yarn";
  s.rope_scaling.factor = 40;
  s.rope_scaling.original_max_position = 4096;
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
  return with_deepseek_attention(s, 1536);
}

// DeepSeek-V2 (deepseek-ai/DeepSeek-V2 and deepseek-ai/DeepSeek-V2-Lite config.json, model_type
// deepseek_v2): V3's latent attention (kv_lora_rank 512, qk_nope/rope 128/64, v 128) and dense-then-MoE plan
// (first_k_dense_replace 1, 2 shared experts of moe_intermediate_size), routed by softmax without a selection
// bias or renormalisation (norm_topk_prob false), vocabulary 102,400, 163,840 positions (YaRN x40 from
// 4,096), rms_norm_eps 1e-6. V2: 60 layers of 5120, 128 heads, q_lora_rank 1536, 160 experts of 1536, top-6
// within the best 3 of 8 groups (group_limited_greedy), x16 (routed_scaling_factor); V2-Lite: 27 layers of
// 2048, 16 heads, queries projected directly (q_lora_rank null), 64 experts of 1408, top-6 of all (greedy).
ModelSpec deepseek_v2(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                      int64_t q_lora, int64_t experts, int64_t expert_inter, int64_t groups,
                      int64_t top_groups, double scaling) {
  MoeSpec m = routed(experts, 6, expert_inter, false);
  m.shared_experts = 2;
  m.shared_intermediate = expert_inter;
  m.first_dense_layers = 1;
  m.groups = groups;
  m.top_groups = top_groups;
  m.routed_scaling = scaling;
  ModelSpec s = moe_model(name, ModelFamily::kDeepseekV2, layers, hidden, inter, heads, heads, 192, 102400,
                          163840, 1e4, m);
  return with_deepseek_attention(s, q_lora);
}

// Qwen2-MoE (Qwen/Qwen1.5-MoE-A2.7B, Qwen/Qwen2-57B-A14B config.json): Qwen2's biased trunk, every layer MoE
// (decoder_sparse_step 1, mlp_only_layers []), softmax top-k not renormalised (norm_topk_prob false), one
// shared expert of shared_expert_intermediate_size behind a sigmoid gate, vocabulary 151,936, rope_theta 1e6,
// rms_norm_eps 1e-6, untied.
ModelSpec qwen2_moe(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                    int64_t kv_heads, int64_t max_pos, int64_t experts, int64_t k, int64_t expert_inter,
                    int64_t shared_inter) {
  MoeSpec m = routed(experts, k, expert_inter, false);
  m.shared_experts = 1;
  m.shared_intermediate = shared_inter;
  m.shared_expert_gate = true;
  ModelSpec s = moe_model(name, ModelFamily::kQwen2Moe, layers, hidden, inter, heads, kv_heads,
                          hidden / heads, 151936, max_pos, 1e6, m);
  s.qkv_bias = true;
  s.norm_eps = 1e-6;
  return s;
}

// Llama 3.1 and 3.2 (meta-llama/Llama-3.1-8B, -70B, -405B, Llama-3.2-1B, -3B config.json): Llama 3's trunk
// (vocabulary 128,256, rope_theta 5e5, rms_norm_eps 1e-5) with 131,072 positions by llama3 rope scaling from
// 8,192 (factor 8; 3.2: 32, low/high frequency factors 1 and 4); 3.2 ties its embeddings.
ModelSpec llama31(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                  double rope_factor, bool tied) {
  ModelSpec s = llama(name, layers, hidden, inter, heads, 8, 128256, 131072, 5e5);
  s.rope_scaling.type = "llama3";
  s.rope_scaling.factor = rope_factor;
  s.rope_scaling.low_freq_factor = 1.0;
  s.rope_scaling.high_freq_factor = 4.0;
  s.rope_scaling.original_max_position = 8192;
  s.tied_embeddings = tied;
  return s;
}

// Mistral-7B (mistralai/Mistral-7B-v0.1, Mistral-7B-v0.3 config.json, model_type mistral): 32 layers of 4096,
// 32 heads over 8 KV heads, SwiGLU of 14336, 32,768 positions, rms_norm_eps 1e-5, untied. v0.1: vocabulary
// 32,000, rope_theta 1e4 and a 4,096-token window on every layer; v0.3: vocabulary 32,768, rope_theta 1e6,
// no window (sliding_window null).
ModelSpec mistral7b(const std::string& name, int64_t vocab, double theta, int64_t window) {
  ModelSpec s = llama(name, 32, 4096, 14336, 32, 8, vocab, 32768, theta);
  s.family = ModelFamily::kMistral;
  s.sliding_window = window;
  return s;
}

// Gemma 2 (google/gemma-2-2b, -9b, -27b config.json, model_type gemma2): head_dim set apart from hidden /
// heads, four RMSNorms a layer, GeGLU (gelu_pytorch_tanh), tied embeddings, vocabulary 256,000, 8,192
// positions, rope_theta 1e4, rms_norm_eps 1e-6, and every other layer local (layer 0 first) over a
// 4,096-token window. Not priced: the attention and final logits' soft-capping (attn_logit_softcapping 50,
// final_logit_softcapping 30: elementwise, and a serving engine's choice of attention kernel).
ModelSpec gemma2(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                 int64_t kv_heads, int64_t head_dim) {
  ModelSpec s = llama(name, layers, hidden, inter, heads, kv_heads, 256000, 8192, 1e4);
  s.family = ModelFamily::kGemma2;
  s.head_dim = head_dim;
  s.tied_embeddings = true;
  s.norm_eps = 1e-6;
  s.sliding_window = 4096;
  s.sliding_window_pattern = 2;
  return s;
}

// Gemma 3's text decoder (google/gemma-3-1b-pt config.json, model_type gemma3_text; google/gemma-3-4b-pt,
// -12b-pt, -27b-pt config.json's text_config over Gemma3TextConfig's defaults): Gemma 2's layer with Qwen3's
// query/key norms, no soft-capping, five local layers to one global (sliding_window_pattern 6) over a window
// of 512 (1B) or 1,024 tokens, rope_theta 1e6 on the global layers (linear scaling x8 from 4B up), tied
// embeddings. 1B: vocabulary 262,144, 32,768 positions; 4B and up: 262,208 and 131,072. The 4B, 12B and 27B
// checkpoints are Gemma3ForConditionalGeneration: their SigLIP vision tower and projector (about 0.42B
// parameters) are not part of the shape, so a run that loads them holds that much more than is priced.
ModelSpec gemma3(const std::string& name, int64_t layers, int64_t hidden, int64_t inter, int64_t heads,
                 int64_t kv_heads, int64_t head_dim) {
  const bool small = hidden < 2048;  // the 1B
  ModelSpec s = llama(name, layers, hidden, inter, heads, kv_heads, small ? 262144 : 262208,
                      small ? 32768 : 131072, 1e6);
  s.family = ModelFamily::kGemma3;
  s.head_dim = head_dim;
  s.qk_norm = true;
  s.tied_embeddings = true;
  s.norm_eps = 1e-6;
  s.sliding_window = small ? 512 : 1024;
  s.sliding_window_pattern = 6;
  if (!small) {
    s.rope_scaling.type = "linear";
    s.rope_scaling.factor = 8.0;
  }
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
    add(llama31("llama3.1-8b", 32, 4096, 14336, 32, 8.0, false));
    add(llama31("llama3.1-70b", 80, 8192, 28672, 64, 8.0, false));
    add(llama31("llama3.1-405b", 126, 16384, 53248, 128, 8.0, false));
    add(llama31("llama3.2-1b", 16, 2048, 8192, 32, 32.0, true));
    add(llama31("llama3.2-3b", 28, 3072, 8192, 24, 32.0, true));
    add(mistral7b("mistral-7b-v0.1", 32000, 1e4, 4096));
    add(mistral7b("mistral-7b-v0.3", 32768, 1e6, 0));
    // Mistral-NeMo (mistralai/Mistral-Nemo-Instruct-2407 config.json, model_type mistral): 40 layers of 5120,
    // 32 heads of head_dim 128 (not 5120 / 32) over 8 KV heads, SwiGLU of 14336, vocabulary 131,072,
    // rope_theta 1e6, rms_norm_eps 1e-5, no window, untied; 1,024,000 positions (the Base-2407's config.json
    // says 128,000).
    ModelSpec nemo = llama("mistral-nemo-2407", 40, 5120, 14336, 32, 8, 131072, 1024000, 1e6);
    nemo.family = ModelFamily::kMistral;
    nemo.head_dim = 128;
    add(nemo);
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
    // Qwen/Qwen2-72B-Instruct config.json: Qwen2.5-72B's trunk, 32,768 positions, rope_theta 1e6.
    add(qwen25("qwen2-72b", 80, 8192, 29568, 64, 8, 152064, false));
    // Qwen/Qwen2.5-Coder-14B-Instruct config.json: Qwen2.5-14B's trunk, 32,768 positions.
    add(qwen25("qwen2.5-coder-14b", 48, 5120, 13824, 40, 8, 152064, false));
    // ByteDance-Seed/Seed-OSS-36B-Base and -Instruct config.json (model_type seed_oss): Qwen2's layer (biased
    // q, k and v, attention_out_bias false, no MLP bias) with head_dim 128 over 80 heads of a 5120 width, 8
    // KV heads, 64 layers, SwiGLU of 27648, vocabulary 155,136, 524,288 positions, rope_theta 1e7,
    // rms_norm_eps 1e-6, untied.
    ModelSpec seed_oss = qwen25("seed-oss-36b", 64, 5120, 27648, 80, 8, 155136, false);
    seed_oss.head_dim = 128;
    seed_oss.max_positions = 524288;
    seed_oss.rope_theta = 1e7;
    add(seed_oss);
    // XiaomiMiMo/MiMo-7B-Base, -SFT and -RL config.json (MiMoForCausalLM, model_type mimo): Qwen2's layer
    // (attention_bias true), 36 layers of 4096, 32 heads over 8 KV heads, SwiGLU of 11008, vocabulary
    // 151,680, 32,768 positions, rope_theta 640,000, rms_norm_eps 1e-5, untied. Its multi-token-prediction
    // layer (num_nextn_predict_layers 1) is not part of the shape, as DeepSeek-V3's.
    ModelSpec mimo = qwen25("mimo-7b", 36, 4096, 11008, 32, 8, 151680, false);
    mimo.rope_theta = 640000;
    mimo.norm_eps = 1e-5;
    add(mimo);
    // Qwen/Qwen2.5-Math-7B config.json: Qwen2.5-7B's trunk with 4,096 positions and rope_theta 1e4 (veRL's
    // DAPO scripts raise the positions by actor_rollout_ref.model.override_config.max_position_embeddings).
    ModelSpec math7 = qwen25("qwen2.5-math-7b", 28, 3584, 18944, 28, 4, 152064, false);
    math7.max_positions = 4096;
    math7.rope_theta = 1e4;
    add(math7);
    // Qwen/Qwen2.5-Math-1.5B config.json: Qwen2.5-1.5B's trunk (tied) with 4,096 positions and rope_theta
    // 1e4.
    ModelSpec math15 = qwen25("qwen2.5-math-1.5b", 28, 1536, 8960, 12, 2, 151936, true);
    math15.max_positions = 4096;
    math15.rope_theta = 1e4;
    add(math15);
    // DeepSeek-R1's distillations into Qwen (deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B, -7B, -14B, -32B
    // config.json): the trunks of Qwen2.5-Math-1.5B (untied here), Qwen2.5-Math-7B, Qwen2.5-14B and -32B,
    // with 131,072 positions; rope_theta 1e4 (1.5B, 7B) or 1e6, rms_norm_eps 1e-6 (1.5B, 7B) or 1e-5. No one
    // of them is its base's exact shape (positions; the 1.5B's untied head adds 0.23B parameters).
    auto distill = [](const std::string& name, ModelSpec base, double theta, double eps) {
      base.name = name;
      base.tied_embeddings = false;
      base.max_positions = 131072;
      base.rope_theta = theta;
      base.norm_eps = eps;
      return base;
    };
    add(distill("deepseek-r1-distill-qwen-1.5b", math15, 1e4, 1e-6));
    add(distill("deepseek-r1-distill-qwen-7b", math7, 1e4, 1e-6));
    add(distill("deepseek-r1-distill-qwen-14b", qwen25("", 48, 5120, 13824, 40, 8, 152064, false), 1e6,
                1e-5));
    add(distill("deepseek-r1-distill-qwen-32b", qwen25("", 64, 5120, 27648, 40, 8, 152064, false), 1e6,
                1e-5));
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
    add(gemma2("gemma2-2b", 26, 2304, 9216, 8, 4, 256));
    add(gemma2("gemma2-9b", 42, 3584, 14336, 16, 8, 256));
    add(gemma2("gemma2-27b", 46, 4608, 36864, 32, 16, 128));
    add(gemma3("gemma3-1b", 26, 1152, 6912, 4, 1, 256));
    add(gemma3("gemma3-4b", 34, 2560, 10240, 8, 4, 256));
    add(gemma3("gemma3-12b", 48, 3840, 15360, 16, 8, 256));
    add(gemma3("gemma3-27b", 62, 5376, 21504, 32, 16, 128));
    add(gpt2("gpt2", 12, 768, 12, 50257, 1024));
    add(gpt2("gpt2-medium", 24, 1024, 16, 50257, 1024));
    // Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): 8 experts of 14336 (intermediate_size), top-2,
    // softmax renormalised over the two (HF's MixtralSparseMoeBlock always does), 32k positions, theta 1e6.
    add(moe_model("mixtral-8x7b", ModelFamily::kMixtral, 32, 4096, 14336, 32, 8, 128, 32000, 32768, 1e6,
                  routed(8, 2, 14336, true)));
    // Mixtral-8x22B (mistralai/Mixtral-8x22B-v0.1 config.json): 56 layers of 6144, 48 heads over 8 KV heads,
    // 8 experts of 16384, top-2, vocabulary 32,000 (the -Instruct-v0.1's is 32,768), 65,536 positions, theta
    // 1e6, no window.
    add(moe_model("mixtral-8x22b", ModelFamily::kMixtral, 56, 6144, 16384, 48, 8, 128, 32000, 65536, 1e6,
                  routed(8, 2, 16384, true)));
    // Qwen1.5-MoE-A2.7B: 24 layers of 2048, 16 heads (no GQA), 60 experts of 1408, top-4, a shared expert of
    // 5632, 8,192 positions. Qwen2-57B-A14B: 28 layers of 3584, 28 heads over 4 KV heads, 64 experts of 2560,
    // top-8, a shared expert of 20480, 131,072 positions.
    add(qwen2_moe("qwen1.5-moe-a2.7b", 24, 2048, 5632, 16, 16, 8192, 60, 4, 1408, 5632));
    add(qwen2_moe("qwen2-57b-a14b", 28, 3584, 18944, 28, 4, 131072, 64, 8, 2560, 20480));
    add(deepseek_v2("deepseek-v2-lite", 27, 2048, 10944, 16, 0, 64, 1408, 1, 1, 1.0));
    add(deepseek_v2("deepseek-v2", 60, 5120, 12288, 128, 1536, 160, 1536, 8, 3, 16.0));
    add(qwen3_moe("qwen3-30b-a3b", 48, 2048, 6144, 32, 768));
    // Qwen/Qwen3-30B-A3B-Instruct-2507 and -Thinking-2507 config.json: Qwen3-30B-A3B's shape with 262,144
    // positions and rope_theta 1e7.
    ModelSpec moe_2507 = qwen3_moe("qwen3-30b-a3b-2507", 48, 2048, 6144, 32, 768);
    moe_2507.max_positions = 262144;
    moe_2507.rope_theta = 1e7;
    add(moe_2507);
    add(qwen3_moe("qwen3-235b-a22b", 94, 4096, 12288, 64, 1536));
    add(gpt_oss("gpt-oss-20b", 24, 32));
    add(gpt_oss("gpt-oss-120b", 36, 128));
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
