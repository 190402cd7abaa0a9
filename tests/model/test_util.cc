#include "test_util.h"

#include <sstream>

#include "core/rng.h"
#include "model/init.h"

namespace realign::model::testing {

ModelSpec llama_scaled_tiny() {
  ModelSpec s = builtin_model("llama-tiny");
  s.rope_scaling.type = "llama3";
  s.rope_scaling.factor = 8.0;
  s.rope_scaling.low_freq_factor = 1.0;
  s.rope_scaling.high_freq_factor = 4.0;
  s.rope_scaling.original_max_position = 16;
  s.rope_theta = 500000.0;
  return s;
}

ModelSpec qwen2_tiny() {
  ModelSpec s = builtin_model("llama-tiny");
  s.name = "qwen2-tiny";
  s.family = ModelFamily::kQwen2;
  s.qkv_bias = true;
  s.tied_embeddings = true;
  s.norm_eps = 1e-6;
  return s;
}

ModelSpec mistral_tiny() {
  ModelSpec s = builtin_model("llama-tiny");
  s.name = "mistral-tiny";
  s.family = ModelFamily::kMistral;
  s.sliding_window = 5;
  return s;
}

ModelSpec mixtral_tiny() {
  ModelSpec s = builtin_model("llama-tiny");
  s.name = "mixtral-tiny";
  s.family = ModelFamily::kMixtral;
  s.intermediate = 48;
  s.moe.num_experts = 8;
  s.moe.experts_per_token = 2;
  s.moe.expert_intermediate = 48;
  s.moe.normalize_top_k = true;
  return s;
}

ModelSpec qwen3_moe_tiny() {
  ModelSpec s = builtin_model("moe-tiny");
  s.n_layers = 3;
  s.moe.dense_layers = {1};
  s.norm_eps = 1e-6;
  return s;
}

ModelSpec qwen2_moe_tiny() {
  ModelSpec s = builtin_model("llama-tiny");
  s.name = "qwen2-moe-tiny";
  s.family = ModelFamily::kQwen2Moe;
  s.qkv_bias = true;
  s.norm_eps = 1e-6;
  s.moe.num_experts = 4;
  s.moe.experts_per_token = 2;
  s.moe.expert_intermediate = 32;
  s.moe.shared_experts = 1;
  s.moe.shared_intermediate = 80;
  s.moe.shared_expert_gate = true;
  s.moe.sparse_step = 2;
  s.moe.normalize_top_k = false;
  return s;
}

Transformer make_model(const ModelSpec& spec, HeadKind head, uint64_t seed, at::ScalarType dtype,
                       ParallelContext parallel) {
  Transformer m(spec, head, parallel, dtype, at::kCPU);
  InitOptions o;
  o.std = 0.1;
  o.random_norms_and_biases = true;
  const int tp = parallel.tp ? parallel.tp->size() : 1, tp_rank = parallel.tp ? parallel.tp->rank() : 0;
  m.load_shards(init_rank_params(spec, head, seed, tp_rank, tp, parallel.stage, parallel.n_stages, o));
  return m;
}

std::vector<std::vector<int64_t>> random_sequences(int64_t vocab, const std::vector<int64_t>& lengths,
                                                   uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<int64_t>> out;
  for (int64_t n : lengths) {
    std::vector<int64_t> s;
    for (int64_t i = 0; i < n; ++i) s.push_back(rng.uniform_int(vocab));
    out.push_back(s);
  }
  return out;
}

std::string compare(const at::Tensor& got_in, const at::Tensor& want_in, double atol, double rtol) {
  std::ostringstream os;
  if (!got_in.sizes().equals(want_in.sizes())) {
    os << "shape " << got_in.sizes() << " vs " << want_in.sizes();
    return os.str();
  }
  at::Tensor got = got_in.detach().to(at::kDouble).flatten(), want = want_in.detach().to(at::kDouble).flatten();
  at::Tensor err = (got - want).abs();
  at::Tensor bad = (err > atol + rtol * want.abs()) | got.isnan() | want.isnan();
  const int64_t n_bad = bad.sum().item<int64_t>();
  if (n_bad == 0) return "";
  os << n_bad << " of " << got.numel() << " elements differ; max abs error " << err.max().item<double>()
     << "; first:";
  at::Tensor idx = bad.nonzero().flatten();
  for (int64_t i = 0; i < std::min<int64_t>(5, idx.numel()); ++i) {
    const int64_t k = idx[i].item<int64_t>();
    os << " [" << k << "] " << got[k].item<double>() << " vs " << want[k].item<double>();
  }
  return os.str();
}

}  // namespace realign::model::testing
