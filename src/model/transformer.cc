#include "model/transformer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <c10/core/GradMode.h>
#include <cmath>
#include <sstream>

#include "core/check.h"
#include "core/error.h"
#include "model/attention.h"
#include "model/rope.h"
#include "model/shard.h"
#include "model/tp_ops.h"

namespace realign::model {
namespace {

// ADL would find at::linear for two arguments: a distinct name keeps the optional bias unambiguous.
at::Tensor dense(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b = at::Tensor()) {
  return b.defined() ? at::linear(x, w, b) : at::linear(x, w);
}

}  // namespace

Transformer::Transformer(ModelSpec spec, HeadKind head, ParallelContext parallel, at::ScalarType dtype,
                         at::Device device)
    : spec_(std::move(spec)), head_(head), parallel_(std::move(parallel)), dtype_(dtype), device_(device) {
  validate_model_spec(spec_, spec_.name);
  if (!parallel_.tp) parallel_.tp = comm::single_rank_group();
  if (!parallel_.ep) parallel_.ep = comm::single_rank_group();
  const int tp_size = parallel_.tp->size(), tp_rank = parallel_.tp->rank();
  const int ep_size = parallel_.ep->size(), ep_rank = parallel_.ep->rank();
  if (std::string why = tp_incompatibility(spec_, tp_size); !why.empty()) throw Error(spec_.name, why);
  if (std::string why = runtime_model_problem(spec_); !why.empty()) throw Error(spec_.name, why);
  if (spec_.is_moe() && spec_.moe.num_experts % ep_size != 0)
    throw Error(spec_.name, "ep " + std::to_string(ep_size) + " does not divide the " +
                                std::to_string(spec_.moe.num_experts) + " experts");
  if (parallel_.n_stages < 1 || parallel_.n_stages > spec_.n_layers || parallel_.stage < 0 ||
      parallel_.stage >= parallel_.n_stages)
    throw Error(spec_.name, "pipeline stage " + std::to_string(parallel_.stage) + " of " +
                                std::to_string(parallel_.n_stages) + " is invalid for " +
                                std::to_string(spec_.n_layers) + " layers");
  if (dtype_ != at::kFloat && dtype_ != at::kBFloat16 && dtype_ != at::kHalf && dtype_ != at::kDouble)
    throw Error(spec_.name, std::string("unsupported parameter dtype ") + c10::toString(dtype_));
  layers_ = stage_layers(spec_.n_layers, parallel_.stage, parallel_.n_stages);
  q_heads_ = spec_.n_heads / tp_size;
  kv_heads_ = spec_.n_kv_heads / tp_size;

  const auto opts = at::TensorOptions().dtype(dtype_).device(device_);
  for (const ParamInfo& p : model_params(spec_, head_)) {
    if (p.name == "embed.weight") {
      vocab_ = tp_shard_range(p, tp_rank, tp_size);
      for (int r = 0; r < tp_size; ++r) vocab_sizes_.push_back(tp_shard_range(p, r, tp_size).size());
    }
    if (!stage_holds(p, parallel_.stage, parallel_.n_stages, spec_.n_layers)) continue;
    infos_.push_back(p);
    at::Tensor t = at::zeros(shard_shape(p, tp_rank, tp_size, ep_rank, ep_size), opts);
    t.set_requires_grad(true);
    params_.emplace(p.name, t);
  }
  for (int64_t i = layers_.begin; i < layers_.end; ++i) {
    const std::string n = "layers." + std::to_string(i) + ".";
    Layer l;
    l.attn_norm_w = param(n + "attn_norm.weight");
    l.attn_norm_b = param(n + "attn_norm.bias");
    l.q_w = param(n + "attn.q.weight");
    l.q_b = param(n + "attn.q.bias");
    l.k_w = param(n + "attn.k.weight");
    l.k_b = param(n + "attn.k.bias");
    l.v_w = param(n + "attn.v.weight");
    l.v_b = param(n + "attn.v.bias");
    l.o_w = param(n + "attn.o.weight");
    l.o_b = param(n + "attn.o.bias");
    l.q_norm_w = param(n + "attn.q_norm.weight");
    l.k_norm_w = param(n + "attn.k_norm.weight");
    l.mlp_norm_w = param(n + "mlp_norm.weight");
    l.mlp_norm_b = param(n + "mlp_norm.bias");
    l.gate_w = param(n + "mlp.gate.weight");
    l.up_w = param(n + "mlp.up.weight");
    l.up_b = param(n + "mlp.up.bias");
    l.down_w = param(n + "mlp.down.weight");
    l.down_b = param(n + "mlp.down.bias");
    l.moe = spec_.moe.is_moe_layer(i);
    l.experts = MoeWeights{param(n + "moe.router.weight"),      param(n + "moe.experts.gate.weight"),
                           param(n + "moe.experts.up.weight"),  param(n + "moe.experts.down.weight"),
                           param(n + "moe.shared.gate.weight"), param(n + "moe.shared.up.weight"),
                           param(n + "moe.shared.down.weight"), param(n + "moe.shared_gate.weight")};
    layer_params_.push_back(l);
  }
  if (spec_.family != ModelFamily::kGpt2) inv_freq_ = rope_inv_freq(spec_).to(device_);
}

at::Tensor Transformer::param(const std::string& name) const {
  auto it = params_.find(name);
  return it == params_.end() ? at::Tensor() : it->second;
}

std::vector<at::Tensor> Transformer::parameters() const {
  std::vector<at::Tensor> out;
  for (const ParamInfo& p : infos_) out.push_back(params_.at(p.name));
  return out;
}

void Transformer::load_shards(const std::map<std::string, at::Tensor>& shards, bool strict) {
  c10::NoGradGuard no_grad;
  for (auto& [name, t] : params_) {
    auto it = shards.find(name);
    if (it == shards.end()) {
      if (strict) throw Error(name, "missing from the shards to load");
      continue;
    }
    if (!it->second.sizes().equals(t.sizes())) {
      std::ostringstream os;
      os << "shard has shape " << it->second.sizes() << ", this rank holds " << t.sizes();
      throw Error(name, os.str());
    }
    t.copy_(it->second);
  }
  if (strict)
    for (const auto& kv : shards)
      if (!params_.count(kv.first)) throw Error(kv.first, "is not held by this rank (stage/tp) of the model");
}

at::Tensor Transformer::embed(const at::Tensor& tokens, const at::Tensor& positions) {
  const at::Tensor& w = params_.at("embed.weight");
  at::Tensor x;
  if (vocab_sizes_.size() == 1) {
    x = at::embedding(w, tokens);
  } else {
    // Vocabulary-parallel: each rank looks up the tokens in its slice, zeros the rest; g sums the slices.
    at::Tensor mine = (tokens >= vocab_.begin) & (tokens < vocab_.end);
    at::Tensor local = at::where(mine, tokens - vocab_.begin, at::zeros_like(tokens));
    x = reduce_from_tp(at::embedding(w, local) * mine.unsqueeze(-1).to(w.scalar_type()), tp());
  }
  if (spec_.family == ModelFamily::kGpt2) x = x + at::embedding(params_.at("pos_embed.weight"), positions);
  return x;
}

at::Tensor Transformer::norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) const {
  at::Tensor x32 = x.to(at::kFloat);
  if (spec_.family == ModelFamily::kGpt2)
    return at::layer_norm(x32, {spec_.hidden}, w.to(at::kFloat), b.to(at::kFloat), spec_.norm_eps).to(dtype_);
  // RMSNorm as HF LLaMA: normalise in fp32, cast back, then scale.
  x32 = x32 * at::rsqrt(x32.pow(2).mean(-1, true) + spec_.norm_eps);
  return w * x32.to(dtype_);
}

at::Tensor Transformer::attention_block(const Layer& l, const at::Tensor& x, const RopeTables& rope,
                                        const at::Tensor& mask, KvCache* cache, int64_t local_layer) {
  const int64_t B = x.size(0), T = x.size(1), d = spec_.head_dim;
  at::Tensor h = copy_to_tp(norm(x, l.attn_norm_w, l.attn_norm_b), tp());
  at::Tensor q = dense(h, l.q_w, l.q_b).view({B, T, q_heads_, d}).transpose(1, 2);
  at::Tensor k = dense(h, l.k_w, l.k_b).view({B, T, kv_heads_, d}).transpose(1, 2);
  at::Tensor v = dense(h, l.v_w, l.v_b).view({B, T, kv_heads_, d}).transpose(1, 2);
  if (l.q_norm_w.defined()) {
    // Qwen3: per head, before the rotary embedding. The weights are replicated over tp but scale only this
    // rank's heads: f sums their gradient over tp.
    q = norm(q, copy_to_tp(l.q_norm_w, tp()), at::Tensor());
    k = norm(k, copy_to_tp(l.k_norm_w, tp()), at::Tensor());
  }
  if (rope.cos.defined()) {
    q = apply_rope(q, rope);
    k = apply_rope(k, rope);
  }
  if (cache != nullptr && cache->write_slots.defined()) {
    cache->k[local_layer].index_copy_(2, cache->write_slots, k);
    cache->v[local_layer].index_copy_(2, cache->write_slots, v);
    k = cache->k[local_layer];
    v = cache->v[local_layer];
  } else if (cache != nullptr) {
    const int64_t s0 = cache->length;
    cache->k[local_layer].narrow(2, s0, T).copy_(k);
    cache->v[local_layer].narrow(2, s0, T).copy_(v);
    k = cache->k[local_layer].narrow(2, 0, s0 + T);
    v = cache->v[local_layer].narrow(2, 0, s0 + T);
  }
  at::Tensor a = attend(q.contiguous(), k, v, mask).transpose(1, 2).reshape({B, T, q_heads_ * d});
  at::Tensor o = reduce_from_tp(dense(a, l.o_w), tp());
  return l.o_b.defined() ? o + l.o_b : o;
}

at::Tensor Transformer::mlp_block(const Layer& l, const at::Tensor& x) {
  if (l.moe) return moe_mlp(spec_.moe, l.experts, norm(x, l.mlp_norm_w, l.mlp_norm_b), tp(), ep());
  at::Tensor h = copy_to_tp(norm(x, l.mlp_norm_w, l.mlp_norm_b), tp());
  at::Tensor inner;
  if (spec_.family == ModelFamily::kGpt2)
    inner = at::gelu(dense(h, l.up_w, l.up_b), "tanh");
  else
    inner = at::silu(dense(h, l.gate_w)) * dense(h, l.up_w);
  at::Tensor out = reduce_from_tp(dense(inner, l.down_w), tp());
  return l.down_b.defined() ? out + l.down_b : out;
}

at::Tensor Transformer::run_layers(at::Tensor x, const at::Tensor& positions, const at::Tensor& mask,
                                   KvCache* cache) {
  const RopeTables rope = inv_freq_.defined() ? rope_tables(positions, inv_freq_, dtype_) : RopeTables{};
  for (size_t i = 0; i < layer_params_.size(); ++i) {
    const Layer& l = layer_params_[i];
    x = x + attention_block(l, x, rope, mask, cache, int64_t(i));
    x = x + mlp_block(l, x);
  }
  if (last_stage()) x = norm(x, param("final_norm.weight"), param("final_norm.bias"));
  return x;
}

at::Tensor Transformer::forward_stage(const TokenBatch& batch, const at::Tensor& hidden_in) {
  REALIGN_CHECK(batch.tokens.dim() == 2 && batch.positions.sizes().equals(batch.tokens.sizes()) &&
                batch.segments.sizes().equals(batch.tokens.sizes()))
      << "TokenBatch shapes " << batch.tokens.sizes() << " " << batch.positions.sizes() << " "
      << batch.segments.sizes();
  const at::Tensor positions = batch.positions.to(device_);
  if (spec_.family == ModelFamily::kGpt2 && positions.numel() > 0 &&
      positions.max().item<int64_t>() >= spec_.max_positions)
    throw Error(spec_.name, "position " + std::to_string(positions.max().item<int64_t>()) +
                                " exceeds the model's " + std::to_string(spec_.max_positions) +
                                " learned positions");
  at::Tensor x;
  if (first_stage()) {
    x = embed(batch.tokens.to(device_), positions);
  } else {
    REALIGN_CHECK(hidden_in.defined() && hidden_in.dim() == 3 && hidden_in.size(2) == spec_.hidden)
        << "stage " << parallel_.stage << " needs hidden (B, T, " << spec_.hidden << ")";
    x = hidden_in.to(device_, dtype_);
  }
  const at::Tensor mask = segment_mask(batch.segments.to(device_), spec_.sliding_window);
  return run_layers(x, positions, mask, nullptr);
}

at::Tensor Transformer::forward(const TokenBatch& batch) {
  REALIGN_CHECK(parallel_.n_stages == 1) << "forward() runs the whole model; use forward_stage with pp > 1";
  return forward_stage(batch);
}

const at::Tensor& Transformer::head_weight() const {
  REALIGN_CHECK(last_stage() && head_ == HeadKind::kLanguageModel) << "no language-model head on this rank";
  auto it = params_.find(spec_.tied_embeddings ? "embed.weight" : "lm_head.weight");
  REALIGN_CHECK(it != params_.end());
  return it->second;
}

at::Tensor Transformer::token_logprobs(const at::Tensor& hidden, const at::Tensor& targets,
                                       at::Tensor* entropy, int64_t chunk_elements) {
  const at::Tensor& w = head_weight();
  const int64_t H = spec_.hidden, N = hidden.numel() / H;
  REALIGN_CHECK(targets.numel() == N) << targets.sizes() << " targets for hidden " << hidden.sizes();
  at::Tensor h = copy_to_tp(hidden.reshape({N, H}), tp());
  at::Tensor t = targets.reshape({N}).to(device_);
  const int64_t chunk = std::max<int64_t>(1, chunk_elements / std::max<int64_t>(1, vocab_.size()));
  std::vector<at::Tensor> logps, ents;
  for (int64_t s = 0; s < N; s += chunk) {
    const int64_t n = std::min(chunk, N - s);
    at::Tensor z = at::linear(h.narrow(0, s, n), w).to(at::kFloat);  // (n, V / tp)
    at::Tensor tt = t.narrow(0, s, n);
    if (tp().size() == 1) {
      // The whole vocabulary here: log_softmax is one pass each way, where the sliced form below makes the
      // backward walk (n, V) several times (exp, max, their gradients).
      const at::Tensor logp = at::log_softmax(z, -1);
      logps.push_back(logp.gather(1, tt.unsqueeze(1)).squeeze(1));
      if (entropy != nullptr) ents.push_back(-(logp.exp() * logp).sum(-1));
      continue;
    }
    at::Tensor m = all_reduce_max(std::get<0>(z.detach().max(-1)), tp());
    z = z - m.unsqueeze(-1);
    at::Tensor e = z.exp();
    at::Tensor lse = reduce_from_tp(e.sum(-1), tp()).log();
    at::Tensor mine = (tt >= vocab_.begin) & (tt < vocab_.end);
    at::Tensor local = at::where(mine, tt - vocab_.begin, at::zeros_like(tt));
    at::Tensor tz = reduce_from_tp(z.gather(1, local.unsqueeze(1)).squeeze(1) * mine.to(at::kFloat), tp());
    logps.push_back(tz - lse);
    if (entropy != nullptr) {
      // H = log Z - E_p[z], with E_p[z] = sum(exp(z) z) / Z summed over the vocabulary slices.
      at::Tensor ez = reduce_from_tp((e * z).sum(-1), tp());
      ents.push_back(lse - ez / lse.exp());
    }
  }
  if (entropy != nullptr) *entropy = at::cat(ents).view(targets.sizes());
  return at::cat(logps).view(targets.sizes());
}

at::Tensor Transformer::logits(const at::Tensor& hidden) {
  at::Tensor z = at::linear(copy_to_tp(hidden, tp()), head_weight()).to(at::kFloat);
  return gather_last_dim(z, tp(), vocab_sizes_);
}

at::Tensor Transformer::values(const at::Tensor& hidden) {
  REALIGN_CHECK(last_stage() && head_ == HeadKind::kValue) << "no value head on this rank";
  return at::linear(hidden, params_.at("value_head.weight"), params_.at("value_head.bias"))
      .squeeze(-1)
      .to(at::kFloat);
}

KvCache Transformer::make_cache(int64_t batch, int64_t capacity) const {
  KvCache c;
  const auto opts = at::TensorOptions().dtype(dtype_).device(device_);
  for (size_t i = 0; i < layer_params_.size(); ++i) {
    c.k.push_back(at::zeros({batch, kv_heads_, capacity, spec_.head_dim}, opts));
    c.v.push_back(at::zeros({batch, kv_heads_, capacity, spec_.head_dim}, opts));
  }
  c.valid = at::zeros({batch, capacity}, opts.dtype(at::kBool));
  return c;
}

at::Tensor Transformer::forward_cached(const at::Tensor& tokens, const at::Tensor& positions,
                                       const at::Tensor& valid, KvCache& cache, const at::Tensor& hidden_in) {
  const int64_t T = positions.size(1);
  REALIGN_CHECK(cache.length + T <= cache.capacity())
      << cache.length << " + " << T << " > " << cache.capacity();
  const at::Tensor pos = positions.to(device_);
  at::Tensor mask;
  if (cache.write_slots.defined()) {
    REALIGN_CHECK(cache.write_slots.size(0) == T) << cache.write_slots.sizes() << " slots for " << T << " tokens";
    cache.valid.index_copy_(1, cache.write_slots, valid.to(device_));
    mask = cache_mask_at(cache.valid, cache.write_slots, spec_.sliding_window);
  } else {
    cache.valid.narrow(1, cache.length, T).copy_(valid);
    mask = cache_mask(cache.valid, cache.length, T, spec_.sliding_window);
  }
  at::Tensor x;
  if (first_stage()) {
    x = embed(tokens.to(device_), pos);
  } else {
    REALIGN_CHECK(hidden_in.defined() && hidden_in.dim() == 3 && hidden_in.size(1) == T &&
                  hidden_in.size(2) == spec_.hidden)
        << "stage " << parallel_.stage << " needs hidden (B, " << T << ", " << spec_.hidden << ")";
    x = hidden_in.to(device_, dtype_);
  }
  x = run_layers(x, pos, mask, &cache);
  cache.length += T;
  return x;
}

}  // namespace realign::model
