#include "model/generate.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <c10/core/GradMode.h>

#include "core/check.h"
#include "core/error.h"
#include "model/decode_graph.h"

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

void check_generate_args(const Transformer& m, const std::vector<std::vector<int64_t>>& prompts,
                         const GenerateOptions& o) {
  if (prompts.empty()) throw Error("generate.prompts", "no prompts");
  if (o.max_new_tokens < 1) throw Error("generate.max_new_tokens", "must be at least 1");
  if (!o.greedy && !(o.temperature > 0))
    throw Error("generate.temperature", "must be positive when sampling");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error("generate.top_p", "must lie in (0, 1]");
  if (o.top_k < 0) throw Error("generate.top_k", "must be 0 (off) or positive");
  if (!o.row_seeds.empty() && o.row_seeds.size() != prompts.size())
    throw Error("generate.row_seeds", std::to_string(o.row_seeds.size()) + " seeds for " +
                                          std::to_string(prompts.size()) + " prompts");
  const ModelSpec& spec = m.spec();
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
}

PaddedPrompts left_pad(const std::vector<std::vector<int64_t>>& prompts) {
  const int64_t B = int64_t(prompts.size());
  int64_t L = 0;
  for (const auto& p : prompts) L = std::max<int64_t>(L, int64_t(p.size()));
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  PaddedPrompts out{at::zeros({B, L}, i64), at::zeros({B, L}, i64), at::zeros({B, L}, i64.dtype(at::kBool)),
                    at::empty({B}, i64)};
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = int64_t(prompts[size_t(b)].size()), pad = L - n;
    out.tokens[b].narrow(0, pad, n).copy_(at::tensor(prompts[size_t(b)], i64));
    out.positions[b].narrow(0, pad, n).copy_(at::arange(n, i64));
    out.valid[b].narrow(0, pad, n).fill_(true);
    out.lengths[b] = n;
  }
  return out;
}

std::vector<at::Generator> make_generators(const GenerateOptions& o, int64_t begin, int64_t end) {
  std::vector<at::Generator> gens;
  if (o.row_seeds.empty()) return {at::detail::createCPUGenerator(o.seed)};
  for (int64_t i = begin; i < end; ++i)
    gens.push_back(at::detail::createCPUGenerator(o.row_seeds[size_t(i)]));
  return gens;
}

Choice sample_next(Transformer& m, const at::Tensor& last_hidden, const GenerateOptions& o,
                   std::vector<at::Generator>& gens) {
  Choice c = choose_next(m.logits(last_hidden).squeeze(1), o, gens);
  if (m.tp().size() > 1) {
    // Identical logits and seeds give identical samples; the broadcast makes it a guarantee.
    at::Tensor t = c.tokens.to(at::kCPU).contiguous();
    m.tp().broadcast(t, 0);
    c.tokens = t.to(c.logprobs.device());
  }
  return c;
}

DecodeRows::DecodeRows(const PaddedPrompts& prompts, const GenerateOptions& o, at::Device dev)
    : max_new_tokens_(o.max_new_tokens), pad_id_(o.pad_id), device_(dev) {
  const auto i64 = at::TensorOptions().dtype(at::kLong).device(dev);
  const int64_t B = prompts.tokens.size(0);
  stop_ = at::tensor(o.stop_tokens.empty() ? std::vector<int64_t>{-1} : o.stop_tokens, at::kLong).to(dev);
  done_ = at::zeros({B}, i64.dtype(at::kBool));
  lengths_ = at::zeros({B}, i64);
  next_pos_ = prompts.lengths.to(dev);
}

void DecodeRows::record(const at::Tensor& tokens, const at::Tensor& logprobs) {
  REALIGN_CHECK(!finished_) << "a step recorded after the generation finished";
  const at::Tensor tok = tokens.to(device_);
  const at::Tensor lp =
      logprobs.defined() ? logprobs.to(device_, at::kFloat) : at::zeros(tok.sizes(), at::kFloat).to(device_);
  const at::Tensor live = done_.logical_not();
  tokens_.push_back(at::where(live, tok, at::full_like(tok, pad_id_)));
  logprobs_.push_back(at::where(live, lp, at::zeros_like(lp)));
  lengths_ += live.to(at::kLong);
  done_ = done_ | (live & (tok.unsqueeze(-1) == stop_).any(-1));
  last_ = tok;
  finished_ = int64_t(tokens_.size()) == max_new_tokens_ || done_.all().item<bool>();
}

DecodeRows::Step DecodeRows::next_step() const {
  REALIGN_CHECK(last_.defined()) << "no next step";
  const int64_t step = int64_t(tokens_.size()) - 1;
  const at::Tensor pos = (next_pos_ + step).unsqueeze(1);
  return {last_.unsqueeze(1), pos, at::ones_like(pos, pos.options().dtype(at::kBool))};
}

GenerateResult DecodeRows::result() const {
  REALIGN_CHECK(!tokens_.empty()) << "no step recorded";
  return {at::stack(tokens_, 1), at::stack(logprobs_, 1), lengths_};
}

namespace {

// Whether every rank of the model's expert-parallel group has finished (`mine`: this rank has). A collective
// over the ep group when it has more than one rank: each MoE layer's all-to-all needs every rank of the
// group, so a rank whose rows are done keeps stepping until all of them are.
bool ep_group_finished(Transformer& m, bool mine) {
  if (!m.parallel().ep || m.ep().size() == 1) return mine;
  at::Tensor running = at::full({1}, mine ? 0.0f : 1.0f, at::kFloat);
  m.ep().all_reduce_sum(running);
  return running.item<float>() == 0;
}

}  // namespace

GenerateResult generate(Transformer& m, const std::vector<std::vector<int64_t>>& prompts,
                        const GenerateOptions& o) {
  if (m.parallel().n_stages != 1)
    throw Error("generate", "runs the whole model; pipeline stages generate with runtime::pipeline_generate");
  check_generate_args(m, prompts, o);
  c10::NoGradGuard no_grad;
  const at::Device dev = m.device();
  const PaddedPrompts p = left_pad(prompts);
  KvCache cache = m.make_cache(p.tokens.size(0), p.length() + o.max_new_tokens);
  at::Tensor h = m.forward_cached(p.tokens.to(dev), p.positions.to(dev), p.valid.to(dev), cache);
  std::vector<at::Generator> gens = make_generators(o, 0, int64_t(prompts.size()));
  DecodeRows rows(p, o, dev);
  const std::unique_ptr<DecodeGraph> graph =  // null where unavailable
      o.max_new_tokens >= kMinStepsForDecodeGraph ? DecodeGraph::make(m, cache) : nullptr;
  for (;;) {
    if (!rows.finished()) {
      const Choice c = sample_next(m, h.narrow(1, h.size(1) - 1, 1), o, gens);
      rows.record(c.tokens, c.logprobs);
    }
    if (ep_group_finished(m, rows.finished())) break;
    // Finished rows (a finished rank) repeat their last input: their outputs are never read.
    const DecodeRows::Step in = rows.next_step();
    h = graph ? graph->step(in.tokens, in.positions, in.valid)
              : m.forward_cached(in.tokens, in.positions, in.valid, cache);
  }
  return rows.result();
}

}  // namespace realign::model
