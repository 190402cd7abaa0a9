#include "runtime/generate_call.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "runtime/inference_calls.h"

namespace realign::runtime {
namespace {

// Next tokens (B) from logits (B, V) fp32.
at::Tensor sample(at::Tensor logits, const SamplingOptions& o, at::Generator& gen) {
  if (o.greedy) return logits.argmax(-1);
  logits = logits / o.temperature;
  if (o.top_k > 0 && o.top_k < logits.size(-1)) {
    at::Tensor kth = std::get<0>(logits.topk(o.top_k, -1)).narrow(-1, o.top_k - 1, 1);
    logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
  }
  if (o.top_p < 1.0) {
    auto [sorted, order] = logits.sort(-1, /*descending=*/true);
    at::Tensor cum = sorted.softmax(-1).cumsum(-1);
    // Drop a token when the mass before it already reaches top_p (the first token always stays).
    at::Tensor drop_sorted = (cum - sorted.softmax(-1)) >= o.top_p;
    at::Tensor drop = at::zeros_like(drop_sorted).scatter(-1, order, drop_sorted);
    logits = logits.masked_fill(drop, -std::numeric_limits<float>::infinity());
  }
  return at::multinomial(logits.softmax(-1), 1, false, gen).squeeze(-1);
}

}  // namespace

std::vector<TokenIds> generate_call(const CallContext& ctx, model::Transformer& model,
                                    const std::vector<TokenIds>& prompts, const SamplingOptions& o) {
  require_single_stage(ctx);
  at::NoGradGuard no_grad;
  const int64_t B = int64_t(prompts.size());
  std::vector<TokenIds> out(static_cast<size_t>(B));
  if (B == 0 || o.max_new_tokens <= 0) return out;
  int64_t L = 0;
  for (const TokenIds& p : prompts) L = std::max<int64_t>(L, int64_t(p.size()));
  // Left-padded prompts: every row's last prompt token sits in column L - 1.
  std::vector<int64_t> tok(size_t(B * L), o.pad_id), pos(size_t(B * L), 0);
  std::vector<uint8_t> valid(size_t(B * L), 0);
  for (int64_t b = 0; b < B; ++b) {
    const TokenIds& p = prompts[size_t(b)];
    int64_t pad = L - int64_t(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      tok[size_t(b * L + pad) + i] = p[i];
      pos[size_t(b * L + pad) + i] = int64_t(i);
      valid[size_t(b * L + pad) + i] = 1;
    }
  }
  at::Tensor tokens = at::from_blob(tok.data(), {B, L}, at::kLong).clone();
  at::Tensor positions = at::from_blob(pos.data(), {B, L}, at::kLong).clone();
  at::Tensor valid_t = at::from_blob(valid.data(), {B, L}, at::kByte).to(at::kBool);
  model::KvCache cache = model.make_cache(B, L + o.max_new_tokens);
  at::Tensor hidden = model.forward_cached(tokens, positions, valid_t, cache);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  std::vector<int64_t> next_pos(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) next_pos[size_t(b)] = int64_t(prompts[size_t(b)].size());
  std::vector<bool> done(static_cast<size_t>(B), false);
  for (int64_t step = 0; step < o.max_new_tokens; ++step) {
    at::Tensor logits = model.logits(hidden.narrow(1, hidden.size(1) - 1, 1)).squeeze(1).to(at::kCPU);
    at::Tensor next = sample(logits, o, gen).contiguous();
    const int64_t* n = next.data_ptr<int64_t>();
    std::vector<int64_t> step_tok(static_cast<size_t>(B), o.pad_id), step_pos(static_cast<size_t>(B));
    std::vector<uint8_t> step_valid(static_cast<size_t>(B), 0);
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      step_pos[size_t(b)] = next_pos[size_t(b)];
      if (done[size_t(b)]) continue;
      out[size_t(b)].push_back(n[b]);
      step_tok[size_t(b)] = n[b];
      step_valid[size_t(b)] = 1;
      ++next_pos[size_t(b)];
      if (std::find(o.stop_tokens.begin(), o.stop_tokens.end(), n[b]) != o.stop_tokens.end()) done[size_t(b)] = true;
      all_done = all_done && done[size_t(b)];
    }
    if (all_done || step + 1 == o.max_new_tokens) break;
    hidden = model.forward_cached(at::tensor(step_tok, at::kLong).view({B, 1}),
                                  at::tensor(step_pos, at::kLong).view({B, 1}),
                                  at::from_blob(step_valid.data(), {B, 1}, at::kByte).to(at::kBool), cache);
  }
  return out;
}

}  // namespace realign::runtime
