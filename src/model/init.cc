#include "model/init.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "core/hash.h"
#include "model/shard.h"

namespace realign::model {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_norm(const std::string& name) { return name.find("norm.") != std::string::npos; }

// splitmix64 finaliser: mixes the seed with the name hash so nearby seeds give unrelated streams.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

at::Tensor init_param(const ParamInfo& p, const ModelSpec& spec, uint64_t seed, const InitOptions& o) {
  at::Generator gen = at::detail::createCPUGenerator(mix(seed ^ fnv1a64(p.name.data(), p.name.size())));
  at::Tensor t = at::empty(p.shape, at::TensorOptions().dtype(at::kFloat));
  const bool bias = ends_with(p.name, ".bias");
  if (is_norm(p.name) && !bias) {
    if (o.random_norms_and_biases) return t.normal_(1.0, 0.1, gen);
    return t.fill_(1.0);
  }
  if (bias) {
    if (o.random_norms_and_biases) return t.normal_(0.0, o.std, gen);
    return t.zero_();
  }
  double std = o.std;
  // GPT-2 (and Megatron) scale the projections that feed the residual stream by 1/sqrt(2 * n_layers).
  if (spec.family == ModelFamily::kGpt2 && (ends_with(p.name, "attn.o.weight") || ends_with(p.name, "mlp.down.weight")))
    std /= std::sqrt(2.0 * double(spec.n_layers));
  return t.normal_(0.0, std, gen);
}

std::map<std::string, at::Tensor> init_full_params(const ModelSpec& spec, HeadKind head, uint64_t seed,
                                                   const InitOptions& options) {
  std::map<std::string, at::Tensor> out;
  for (const ParamInfo& p : model_params(spec, head)) out.emplace(p.name, init_param(p, spec, seed, options));
  return out;
}

std::map<std::string, at::Tensor> init_rank_params(const ModelSpec& spec, HeadKind head, uint64_t seed,
                                                   int tp_rank, int tp_size, int stage, int pp,
                                                   const InitOptions& options, int ep_rank, int ep) {
  std::map<std::string, at::Tensor> out;
  for (const ParamInfo& p : model_params(spec, head)) {
    if (!stage_holds(p, stage, pp, spec.n_layers)) continue;
    out.emplace(p.name,
                shard_of(init_param(p, spec, seed, options), p, tp_rank, tp_size, ep_rank, ep).clone());
  }
  return out;
}

}  // namespace realign::model
