#include "model/generate.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "core/error.h"

namespace realign::model {

Choice choose_next(const at::Tensor& logits, const GenerateOptions& o, at::Generator& gen) {
  std::vector<at::Generator> gens{gen};
  return choose_next(logits, o, gens);
}

Choice choose_next(const at::Tensor& logits, const GenerateOptions& o, std::vector<at::Generator>& gens) {
  if (o.greedy) {
    at::Tensor logp = at::log_softmax(logits, -1);
    at::Tensor tok = logits.argmax(-1);
    return {tok, logp.gather(-1, tok.unsqueeze(-1)).squeeze(-1)};
  }
  at::Tensor z = logits / o.temperature;
  at::Tensor logp = at::log_softmax(z, -1);
  at::Tensor filtered = z;
  if (o.top_k > 0 && o.top_k < z.size(-1)) {
    at::Tensor kth = std::get<0>(z.topk(o.top_k, -1)).narrow(-1, o.top_k - 1, 1);
    filtered = filtered.masked_fill(filtered < kth, -INFINITY);
  }
  if (o.top_p < 1.0) {
    auto [sorted, order] = filtered.sort(-1, /*descending=*/true);
    at::Tensor probs = at::softmax(sorted, -1);
    // Drop a token when the tokens ranked before it already reach top_p (the first always stays).
    at::Tensor drop_sorted = (probs.cumsum(-1) - probs) >= o.top_p;
    at::Tensor drop = at::zeros_like(drop_sorted).scatter(-1, order, drop_sorted);
    filtered = filtered.masked_fill(drop, -INFINITY);
  }
  // Sampled on the CPU with an explicit generator, so a seed gives the same tokens on every device.
  at::Tensor probs = at::softmax(filtered, -1).to(at::kCPU);
  at::Tensor tok;
  if (gens.size() == 1) {
    tok = at::multinomial(probs, 1, false, gens[0]).squeeze(-1);
  } else {
    tok = at::empty({probs.size(0)}, at::kLong);
    for (int64_t b = 0; b < probs.size(0); ++b)
      tok[b] = at::multinomial(probs[b], 1, false, gens[size_t(b)]).squeeze(-1);
  }
  tok = tok.to(logits.device());
  return {tok, logp.gather(-1, tok.unsqueeze(-1)).squeeze(-1)};
}

GenerateResult generate(Transformer& m, const std::vector<std::vector<int64_t>>& prompts, const GenerateOptions& o) {
  if (m.parallel().n_stages != 1)
    throw Error("generate", "pipeline-parallel generation is not supported here; use a layout with pp = 1");
  if (prompts.empty()) throw Error("generate.prompts", "no prompts");
  if (o.max_new_tokens < 1) throw Error("generate.max_new_tokens", "must be at least 1");
  if (!o.greedy && !(o.temperature > 0)) throw Error("generate.temperature", "must be positive when sampling");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error("generate.top_p", "must lie in (0, 1]");
  if (o.top_k < 0) throw Error("generate.top_k", "must be 0 (off) or positive");
  const ModelSpec& spec = m.spec();
  const int64_t B = int64_t(prompts.size());
  int64_t L = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string where = "generate.prompts[" + std::to_string(i) + "]";
    if (prompts[i].empty()) throw Error(where, "is empty");
    for (int64_t t : prompts[i])
      if (t < 0 || t >= spec.vocab)
        throw Error(where, "token " + std::to_string(t) + " is outside the vocabulary [0, " +
                               std::to_string(spec.vocab) + ")");
    L = std::max<int64_t>(L, int64_t(prompts[i].size()));
  }
  if (spec.family == ModelFamily::kGpt2 && L + o.max_new_tokens > spec.max_positions)
    throw Error("generate.max_new_tokens", "prompt plus new tokens exceed the model's " +
                                               std::to_string(spec.max_positions) + " positions");

  at::NoGradGuard no_grad;
  const at::Device dev = m.device();
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  // Left-padded prompts: row b's tokens occupy slots [L - len_b, L).
  // Padding slots hold token 0 (any valid id: they are masked); pad_id only fills the output.
  at::Tensor tokens = at::zeros({B, L}, i64), positions = at::zeros({B, L}, i64);
  at::Tensor valid = at::zeros({B, L}, i64.dtype(at::kBool));
  at::Tensor next_pos = at::empty({B}, i64);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = int64_t(prompts[b].size()), pad = L - n;
    tokens[b].narrow(0, pad, n).copy_(at::tensor(prompts[b], i64));
    positions[b].narrow(0, pad, n).copy_(at::arange(n, i64));
    valid[b].narrow(0, pad, n).fill_(true);
    next_pos[b] = n;
  }
  KvCache cache = m.make_cache(B, L + o.max_new_tokens);
  at::Tensor h = m.forward_cached(tokens.to(dev), positions.to(dev), valid.to(dev), cache);
  at::Tensor logits = m.logits(h.narrow(1, L - 1, 1)).squeeze(1);

  if (!o.row_seeds.empty() && int64_t(o.row_seeds.size()) != B)
    throw Error("generate.row_seeds", std::to_string(o.row_seeds.size()) + " seeds for " + std::to_string(B) +
                                          " prompts");
  std::vector<at::Generator> gens;
  if (o.row_seeds.empty()) gens.push_back(at::detail::createCPUGenerator(o.seed));
  for (uint64_t seed : o.row_seeds) gens.push_back(at::detail::createCPUGenerator(seed));
  at::Tensor stop = at::tensor(o.stop_tokens.empty() ? std::vector<int64_t>{-1} : o.stop_tokens, i64).to(dev);
  at::Tensor done = at::zeros({B}, i64.dtype(at::kBool).device(dev));
  at::Tensor lengths = at::zeros({B}, i64.device(dev));
  next_pos = next_pos.to(dev);
  std::vector<at::Tensor> out_tokens, out_logprobs;
  for (int64_t step = 0; step < o.max_new_tokens; ++step) {
    Choice c = choose_next(logits, o, gens);
    if (m.tp().size() > 1) {
      // Identical logits and seeds give identical samples; the broadcast makes it a guarantee.
      at::Tensor t = c.tokens.to(at::kCPU).contiguous();
      m.tp().broadcast(t, 0);
      c.tokens = t.to(dev);
    }
    at::Tensor live = done.logical_not();
    out_tokens.push_back(at::where(live, c.tokens, at::full_like(c.tokens, o.pad_id)));
    out_logprobs.push_back(at::where(live, c.logprobs, at::zeros_like(c.logprobs)));
    lengths += live.to(at::kLong);
    done = done | (live & (c.tokens.unsqueeze(-1) == stop).any(-1));
    if (step + 1 == o.max_new_tokens || done.all().item<bool>()) break;
    at::Tensor pos = (next_pos + step).unsqueeze(1);
    at::Tensor ones = at::ones({B, 1}, i64.dtype(at::kBool).device(dev));
    h = m.forward_cached(c.tokens.unsqueeze(1), pos, ones, cache);
    logits = m.logits(h).squeeze(1);
  }
  return {at::stack(out_tokens, 1), at::stack(out_logprobs, 1).to(at::kFloat), lengths};
}

}  // namespace realign::model
