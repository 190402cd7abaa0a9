// Batched autoregressive generation with a pre-allocated KV cache: greedy or sampled (temperature, top-k,
// top-p), stop tokens, max new tokens, per-sample lengths. Prompts of different lengths are left-padded so
// every row writes the same cache slot each step. Under tensor parallelism every tp rank calls generate with
// the same prompts and options; the logits are gathered over tp and rank 0's tokens are broadcast, so all
// ranks return the same result. Pipeline-parallel generation (n_stages > 1) is not done here: the runtime
// gathers the stages or runs generation on a layout without pp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "model/transformer.h"

namespace realign::model {

struct GenerateOptions {
  int64_t max_new_tokens = 16;
  bool greedy = true;        // argmax; temperature / top_k / top_p ignored
  double temperature = 1.0;  // > 0
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;        // nucleus: the smallest set of tokens whose probability reaches top_p; 1 = off
  std::vector<int64_t> stop_tokens;  // a row ends after emitting one (it is kept in the output)
  uint64_t seed = 0;
  // One seed per prompt: each row samples from its own generator, so a row's tokens do not depend on which
  // rows share its batch (a data-parallel split of the same prompts samples the same responses). Empty: one
  // generator seeded with `seed` for the whole batch.
  std::vector<uint64_t> row_seeds;
  int64_t pad_id = 0;  // fills tokens after a row's end
};

struct GenerateResult {
  at::Tensor tokens;    // (B, N) int64, N = the longest generation; pad_id after each row's end
  at::Tensor logprobs;  // (B, N) fp32: log-prob of each token under the temperature-scaled distribution
                        // (before top-k / top-p truncation; greedy: temperature 1); 0 after the end
  at::Tensor lengths;   // (B) int64: tokens generated per row (the stop token included)
};

// Throws Error for an empty prompt, a prompt token outside the vocabulary, bad options, or a prompt plus
// max_new_tokens longer than GPT-2's learned positions.
GenerateResult generate(Transformer& model, const std::vector<std::vector<int64_t>>& prompts,
                        const GenerateOptions& options);

// The next-token choice of one step, exposed for tests: logits (B, V) fp32 -> tokens (B) and their log-probs.
struct Choice {
  at::Tensor tokens, logprobs;
};
Choice choose_next(const at::Tensor& logits, const GenerateOptions& options, at::Generator& generator);
// One generator per row (or one for the whole batch).
Choice choose_next(const at::Tensor& logits, const GenerateOptions& options, std::vector<at::Generator>& generators);

}  // namespace realign::model
