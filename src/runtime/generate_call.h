// The actor's generation call: model::generate (KV cache, left-padded prompts, greedy or sampled, stop
// tokens) under a call context, returning each row's response tokens. With row seeds, a row's response
// depends only on its prompt and seed, not on how the batch is split over data-parallel ranks. tp works
// through the model; pp must be 1.
#pragma once

#include <cstdint>
#include <vector>

#include "model/transformer.h"
#include "runtime/call_context.h"
#include "runtime/sequence_batch.h"

namespace realign::runtime {

struct SamplingOptions {
  int64_t max_new_tokens = 16;
  bool greedy = false;
  double temperature = 1.0;
  int64_t top_k = 0;                 // 0: off
  double top_p = 1.0;                // 1: off
  std::vector<int64_t> stop_tokens;  // included in the response when produced
  uint64_t seed = 0;
  std::vector<uint64_t> row_seeds;  // one per prompt; empty: one generator seeded with `seed`
  int64_t pad_id = 0;
};

// One response per prompt (the stop token, when produced, is its last token).
std::vector<TokenIds> generate_call(const CallContext& ctx, model::Transformer& model,
                                    const std::vector<TokenIds>& prompts, const SamplingOptions& options);

}  // namespace realign::runtime
