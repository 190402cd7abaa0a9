#include "train/generate_call.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/check.h"
#include "model/generate.h"
#include "runtime/call_forward.h"
#include "runtime/pipeline.h"
#include "train/inference_calls.h"

namespace realign::train {

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
  // pp > 1: the stages generate pipelined over the plan's micro-batches (at pp = 1 micro-batches would only
  // serialise the batch).
  const model::GenerateResult r =
      ctx.pp->size() > 1 ? runtime::pipeline_generate(*ctx.pp, model, prompts, g,
                                                      runtime::micro_batch_rows(ctx, int64_t(prompts.size())))
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
