#include "train/generate_call.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/check.h"
#include "model/generate.h"
#include "runtime/call_forward.h"
#include "runtime/pipeline.h"
#include "train/inference_calls.h"

namespace realign::train {

namespace {

// The batch generated `rows` prompts at a time, the waves' outputs stitched into one result (on the CPU).
model::GenerateResult generate_in_waves(model::Transformer& model,
                                        const std::vector<runtime::TokenIds>& prompts,
                                        const model::GenerateOptions& g, int64_t rows) {
  const int64_t n = int64_t(prompts.size());
  std::vector<model::GenerateResult> waves;
  int64_t longest = 0;
  for (int64_t begin = 0; begin < n; begin += rows) {
    const int64_t end = std::min(n, begin + rows);
    model::GenerateOptions w = g;
    w.row_seeds.assign(g.row_seeds.begin() + begin, g.row_seeds.begin() + end);
    waves.push_back(model::generate(
        model, std::vector<runtime::TokenIds>(prompts.begin() + begin, prompts.begin() + end), w));
    longest = std::max<int64_t>(longest, waves.back().tokens.size(1));
  }
  model::GenerateResult out;
  out.tokens = at::full({n, longest}, g.pad_id, at::kLong);
  out.logprobs = at::zeros({n, longest}, at::kFloat);
  std::vector<at::Tensor> lengths;
  int64_t begin = 0;
  for (const model::GenerateResult& w : waves) {
    const int64_t b = w.tokens.size(0), t = w.tokens.size(1);
    out.tokens.narrow(0, begin, b).narrow(1, 0, t).copy_(w.tokens.to(at::kCPU));
    out.logprobs.narrow(0, begin, b).narrow(1, 0, t).copy_(w.logprobs.to(at::kCPU).to(at::kFloat));
    lengths.push_back(w.lengths.to(at::kCPU));
    begin += b;
  }
  out.lengths = at::cat(lengths);
  return out;
}

}  // namespace

std::vector<runtime::TokenIds> generate_call(const runtime::CallContext& ctx, model::Transformer& model,
                                             const std::vector<runtime::TokenIds>& prompts,
                                             const SamplingOptions& o, at::Tensor* logprobs) {
  std::vector<runtime::TokenIds> out(prompts.size());
  int64_t longest_prompt = 0;
  for (const runtime::TokenIds& p : prompts)
    longest_prompt = std::max<int64_t>(longest_prompt, int64_t(p.size()));
  if (logprobs) *logprobs = at::zeros({int64_t(prompts.size()), longest_prompt}, at::kFloat);
  if (o.max_new_tokens <= 0) return out;
  // With expert parallelism a rank without prompts still steps with its ep group (model/generate.h), on one
  // placeholder prompt whose tokens are dropped.
  const bool steps_with_ep_group = ctx.ep && ctx.ep->size() > 1;
  if (prompts.empty() && !steps_with_ep_group) return out;
  model::GenerateOptions g;
  g.max_new_tokens = o.max_new_tokens;
  g.greedy = o.greedy;
  g.temperature = o.temperature;
  g.top_k = o.top_k;
  g.top_p = o.top_p;
  g.stop_tokens = o.stop_tokens;
  g.seed = o.seed;
  g.row_seeds = o.row_seeds;
  g.pad_id = o.pad_id;
  if (prompts.empty()) {
    g.row_seeds.clear();
    model::generate(model, {{0}}, g);
    return out;
  }
  // pp > 1: the stages generate pipelined over the plan's micro-batches. pp = 1: the micro-batches generate
  // one after another (waves), holding one micro-batch's KV cache at a time, as the cost model prices them;
  // each row samples from its own seed, so the waves sample what the whole batch would.
  const int64_t rows = runtime::micro_batch_rows(ctx, int64_t(prompts.size()));
  const bool in_waves =
      ctx.pp->size() == 1 && rows < int64_t(prompts.size()) && !g.row_seeds.empty() && !steps_with_ep_group;
  const model::GenerateResult r = ctx.pp->size() > 1
                                      ? runtime::pipeline_generate(*ctx.pp, model, prompts, g, rows)
                                  : in_waves ? generate_in_waves(model, prompts, g, rows)
                                             : model::generate(model, prompts, g);
  const at::Tensor tokens = r.tokens.to(at::kCPU).contiguous(), lengths = r.lengths.to(at::kCPU).contiguous();
  for (size_t b = 0; b < prompts.size(); ++b) {
    const int64_t n = lengths[int64_t(b)].item<int64_t>();
    const int64_t* row = tokens[int64_t(b)].data_ptr<int64_t>();
    out[b].assign(row, row + n);
  }
  if (logprobs) {
    const at::Tensor lp = r.logprobs.to(at::kCPU).to(at::kFloat).contiguous();
    *logprobs = at::zeros({int64_t(prompts.size()), longest_prompt + lp.size(1)}, at::kFloat);
    for (size_t b = 0; b < prompts.size(); ++b) {
      const int64_t n = int64_t(out[b].size()), start = int64_t(prompts[b].size()) - 1;
      REALIGN_CHECK(start >= 0) << "an empty prompt";
      if (n > 0) (*logprobs)[int64_t(b)].narrow(0, start, n).copy_(lp[int64_t(b)].narrow(0, 0, n));
    }
  }
  return out;
}

}  // namespace realign::train
