// The actor's generation call (model/generate.h): samples a response for every prompt with a KV cache,
// stopping a row at a stop token or after max_new_tokens. Deterministic in `seed`, so a resumed
// run samples what an uninterrupted one would. tp works through the model; pp > 1 generates pipelined over
// the call's micro-batches (runtime/pipeline.h), sampling the same tokens as pp = 1 with row seeds.
#pragma once

#include <cstdint>
#include <vector>

#include "model/transformer.h"
#include "runtime/call_context.h"
#include "runtime/sequence_batch.h"

namespace realign::train {

struct SamplingOptions {
  int64_t max_new_tokens = 16;
  bool greedy = false;
  double temperature = 1.0;
  int64_t top_k = 0;                 // 0: off
  double top_p = 1.0;                // 1: off
  std::vector<int64_t> stop_tokens;  // included in the response when produced
  uint64_t seed = 0;
  // One seed per prompt (model/generate.h): a row samples the same tokens whichever rows share its batch, so
  // any data-parallel split of the generation samples the same responses. Empty: `seed` for the batch.
  std::vector<uint64_t> row_seeds;
  int64_t pad_id = 0;
};

// One response per prompt (the stop token, when produced, is its last token). With `logprobs`, also each
// response token's log-prob under the sampling distribution (before top-k / top-p truncation), laid out as
// logprobs_call lays out a forward pass's: (B, longest prompt + response) fp32, the log-prob of the token at
// position t + 1 at position t (a response token j of row b at prompt_len_b - 1 + j), 0 elsewhere.
// No prompts: no responses; with expert parallelism (ctx.ep of several ranks) the rank still decodes along
// with its ep group, which every rank of it must join.
std::vector<runtime::TokenIds> generate_call(const runtime::CallContext& ctx, model::Transformer& model,
                                             const std::vector<runtime::TokenIds>& prompts,
                                             const SamplingOptions& options, at::Tensor* logprobs = nullptr);

}  // namespace realign::train
