#include "cost/memory_model.h"

#include <algorithm>

#include "core/check.h"
#include "core/units.h"
#include "cost/decode_segments.h"
#include "cost/moe_cost.h"

namespace realign {

int64_t ShardSizes::max() const { return *std::max_element(numel.begin(), numel.end()); }

int64_t ShardSizes::max_experts() const {
  return expert_numel.empty() ? 0 : *std::max_element(expert_numel.begin(), expert_numel.end());
}

int64_t ShardSizes::stage_max(int stage) const {
  int64_t m = 0;
  for (int t = 0; t < tp; ++t) m = std::max(m, at(stage, t));
  return m;
}

ShardSizes shard_sizes(const std::vector<ParamInfo>& params, int64_t n_layers, int tp, int pp, int ep) {
  ShardSizes s;
  s.tp = tp;
  s.pp = pp;
  s.ep = ep;
  s.numel.assign(size_t(tp) * pp, 0);
  s.expert_numel.assign(size_t(pp), 0);
  for (const auto& p : params) {
    const int64_t numel = p.numel();
    for (int stage = 0; stage < pp; ++stage) {
      if (!stage_holds(p, stage, pp, n_layers)) continue;
      if (p.expert && !experts_cut_by_tp(ep)) {  // ep divides the experts: every rank holds as many
        const int64_t held = numel / p.shape[0] * ep_shard_range(p, 0, ep).size();
        s.expert_numel[size_t(stage)] += held;
        for (int t = 0; t < tp; ++t) s.numel[size_t(stage) * tp + t] += held;
        continue;
      }
      if (p.expert)  // cut by tp along the inner dimension, like a dense MLP (counted below)
        s.expert_numel[size_t(stage)] +=
            numel / p.shape[size_t(p.split_dim)] * tp_shard_range(p, 0, tp).size();
      for (int t = 0; t < tp; ++t) {
        if (p.split_dim < 0) {
          s.numel[size_t(stage) * tp + t] += numel;
        } else {
          const int64_t extent = p.shape[p.split_dim];
          s.numel[size_t(stage) * tp + t] += numel / extent * tp_shard_range(p, t, tp).size();
        }
      }
    }
  }
  return s;
}

std::string MemoryBreakdown::describe() const {
  std::string out;
  auto add = [&](const char* name, double v) {
    if (v <= 0) return;
    out += (out.empty() ? "" : ", ") + std::string(name) + " " + format_bytes(v);
  };
  add("weights", weights);
  add("gradients", gradients);
  add("optimizer state", optimizer);
  add("activations", activations);
  add("KV cache", kv_cache);
  add("logits", logits);
  return out;
}

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

int64_t seqs_per_dp_rank(const Mfc& mfc, int dp) { return ceil_div(mfc.max_seqs_per_step(), dp); }

int64_t seqs_per_micro_batch(const Mfc& mfc, const Strategy& s) {
  return ceil_div(seqs_per_dp_rank(mfc, s.dp), s.micro_batches);
}

double layer_activation_bytes(const ModelSpec& spec, double tokens, int tp) {
  return tokens * double(spec.hidden) * (10.0 + 24.0 / tp);
}

double recomputed_layer_bytes(const ModelSpec& spec, double tokens) {
  return tokens * double(spec.hidden) * kActivationBytes;
}

double optimizer_bytes_per_param(const Strategy& s) {
  return s.zero1 ? kOptimizerBytesPerParam / s.replicas() : kOptimizerBytesPerParam;
}

double expert_optimizer_bytes_per_param(const Strategy& s) {
  return s.zero1 ? kOptimizerBytesPerParam / expert_data_parallel(s.replicas(), s.tp, s.ep)
                 : kOptimizerBytesPerParam;
}

HomeBytesPerParam home_bytes_per_param(bool trained, const Strategy& home) {
  HomeBytesPerParam b;
  if (!trained) return b;
  b.gradients = kGradBytesPerParam;
  b.optimizer = optimizer_bytes_per_param(home);
  b.expert_optimizer = expert_optimizer_bytes_per_param(home);
  return b;
}

double layers_activation_bytes(const ModelSpec& spec, int64_t begin, int64_t end, double tokens, int tp,
                               int ep) {
  const int64_t moe = spec.moe.moe_layers_in(begin, end);
  double bytes = double(end - begin - moe) * layer_activation_bytes(spec, tokens, tp);
  if (moe > 0) bytes += double(moe) * moe_layer_activation_bytes(spec, tokens, tp, ep);
  return bytes;
}

double max_layer_activation_bytes(const ModelSpec& spec, double tokens, int tp, int ep) {
  const double dense = layer_activation_bytes(spec, tokens, tp);
  if (!spec.is_moe()) return dense;
  const double moe = moe_layer_activation_bytes(spec, tokens, tp, ep);
  return spec.moe.moe_layers_in(0, spec.n_layers) < spec.n_layers ? std::max(dense, moe) : moe;
}

std::vector<MemoryBreakdown> stage_memory(const ModelRole& model, const Mfc& mfc, const Strategy& s,
                                          const ShardSizes& shards) {
  REALIGN_CHECK(shards.tp == s.tp && shards.pp == s.pp && shards.ep == s.ep);
  const ModelSpec& spec = model.spec;
  const double seq_len = double(mfc.seq_len());
  const double mb_seqs = double(seqs_per_micro_batch(mfc, s));
  const double mb_tokens = mb_seqs * seq_len / double(s.cp);  // a rank's share (cp: train, inference only)
  const double vocab_shard = model.head == HeadKind::kValue ? 1.0 : double(spec.vocab) / s.tp;
  std::vector<MemoryBreakdown> out;
  for (int stage = 0; stage < s.pp; ++stage) {
    MemoryBreakdown m;
    const double params = double(shards.stage_max(stage));
    const double experts = double(shards.stage_experts(stage));
    const Range stage_range = stage_layers(spec.n_layers, stage, s.pp);
    const double layers = double(stage_range.size());
    const bool last = stage == s.pp - 1;
    m.weights = params * kWeightBytesPerParam;
    if (mfc.kind() == MfcKind::kTrain) {
      m.gradients = params * kGradBytesPerParam;
      m.optimizer = (params - experts) * optimizer_bytes_per_param(s);
      if (experts > 0) m.optimizer += experts * expert_optimizer_bytes_per_param(s);
      const double in_flight = double(std::min(s.pp - stage, s.micro_batches));
      // With recomputation a layer keeps only its input between forward and backward; the layer being
      // recomputed holds its full activations once.
      m.activations = s.recompute
                          ? in_flight * layers * recomputed_layer_bytes(spec, mb_tokens) +
                                max_layer_activation_bytes(spec, mb_tokens, s.tp, s.ep)
                          : in_flight * layers_activation_bytes(spec, stage_range.begin, stage_range.end,
                                                                mb_tokens, s.tp, s.ep);
      // Logits and their gradient, one chunk at a time.
      if (last) m.logits = 2.0 * std::min<double>(mb_tokens, kLogitChunkTokens) * vocab_shard * kLogitBytes;
    } else if (mfc.kind() == MfcKind::kInference) {
      m.activations = max_layer_activation_bytes(spec, mb_tokens, s.tp, s.ep);
      if (last) m.logits = std::min<double>(mb_tokens, kLogitChunkTokens) * vocab_shard * kLogitBytes;
    } else {
      const double prefill_tokens = mb_seqs * double(mfc.prompt_len);
      m.activations = max_layer_activation_bytes(spec, prefill_tokens, s.tp, s.ep);
      // A pipeline keeps every micro-batch's cache in flight; without one, micro-batches generate one after
      // another (a serving engine's waves: it runs what its cache holds), so one micro-batch's cache is held,
      // of each batch in flight where generation streams (GenerationRun::in_flight_batches).
      const double in_flight = mfc.generation.partial_rollout ? double(mfc.generation.in_flight_batches) : 1.0;
      const double cached_seqs = s.pp > 1 ? double(seqs_per_dp_rank(mfc, s.dp)) : mb_seqs * in_flight;
      // A serving engine's local layer caches at most its window (ModelSpec::attended_tokens); realign's
      // runtime (static batching) allocates every layer's cache for the whole sequence and masks the window.
      const double len = kv_cache_len(mfc);
      const double layer_tokens = mfc.generation.batching == Batching::kStatic
                                      ? layers * len
                                      : spec.attended_tokens(stage_range.begin, stage_range.end, len);
      m.kv_cache = layer_tokens * spec.kv_cache_elements_per_rank(s.tp) * kActivationBytes * cached_seqs;
      if (last) m.logits = mb_seqs * vocab_shard * kLogitBytes;  // one position per sequence and step
    }
    out.push_back(m);
  }
  return out;
}

double kv_cache_len(const Mfc& mfc) {
  const LengthDistribution& d = mfc.generation.lengths;
  if (d.quantiles.empty() || d.fixed()) return double(mfc.seq_len());
  // Static batching allocates every row's cache for the cap (model/generate.cc); a serving engine pages it
  // in as samples grow, and the samples a running batch holds grow to the length-biased mean.
  const double len = mfc.generation.batching == Batching::kStatic ? double(d.cap)
                                                                   : std::min(double(d.cap), running_length(d));
  return double(mfc.prompt_len) + len;
}

MemoryBreakdown call_memory(const ModelRole& model, const Mfc& mfc, const Strategy& s,
                            const ShardSizes& shards) {
  MemoryBreakdown worst;
  for (const MemoryBreakdown& m : stage_memory(model, mfc, s, shards))
    if (m.total() > worst.total()) worst = m;
  return worst;
}

}  // namespace realign
