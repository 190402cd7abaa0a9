// Batched autoregressive generation with a pre-allocated KV cache: greedy or sampled (temperature, top-k,
// top-p), stop tokens, max new tokens, per-sample lengths. Prompts of different lengths are left-padded so
// every row writes the same cache slot each step. Under tensor parallelism every tp rank calls generate with
// the same prompts and options; the logits are gathered over tp and rank 0's tokens are broadcast, so all
// ranks return the same result. With expert parallelism (a mixture-of-experts model whose ParallelContext has
// an ep group of several ranks) the ranks of the ep group may hold different prompts: each decodes until all
// of them are done (its own finished rows pad), as the MoE layers' all-to-alls need every rank of the group
// at every step; each still returns its own rows' result. generate() runs the whole model (n_stages == 1);
// the pieces below it (argument checks, left padding, sampling, the per-row decoding state) are what
// pipelined generation (runtime/pipeline.h) runs on its stages.
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

// The next-token choice of one step, exposed for tests: logits (B, V) fp32 -> tokens (B) and their log-probs.
struct Choice {
  at::Tensor tokens, logprobs;
};
Choice choose_next(const at::Tensor& logits, const GenerateOptions& options, at::Generator& generator);
// One generator per row (or one for the whole batch).
Choice choose_next(const at::Tensor& logits, const GenerateOptions& options,
                   std::vector<at::Generator>& generators);

// Throws Error for an empty prompt, a prompt token outside the vocabulary, bad options, or a prompt plus
// max_new_tokens longer than GPT-2's learned positions.
GenerateResult generate(Transformer& model, const std::vector<std::vector<int64_t>>& prompts,
                        const GenerateOptions& options);

// The checks generate() makes (the Errors above).
void check_generate_args(const Transformer& model, const std::vector<std::vector<int64_t>>& prompts,
                         const GenerateOptions& options);

// Prompts left-padded to the longest, L: row b's tokens occupy slots [L - len_b, L). Padding slots hold token
// 0 (any valid id: they are masked). All on the host.
struct PaddedPrompts {
  at::Tensor tokens, positions;  // (B, L) int64
  at::Tensor valid;              // (B, L) bool
  at::Tensor lengths;            // (B) int64: each prompt's length (its first generated token's position)
  int64_t length() const { return tokens.size(1); }
};
PaddedPrompts left_pad(const std::vector<std::vector<int64_t>>& prompts);

// The samplers of rows [begin, end) of a generation: one generator per row seeded with options.row_seeds[i],
// or, without row seeds, one generator seeded with options.seed (shared by every copy of the vector: copies
// of an at::Generator share its state).
std::vector<at::Generator> make_generators(const GenerateOptions& options, int64_t begin, int64_t end);

// The next tokens from the hidden state of the last position (B, 1, H) on the model's last stage: logits
// gathered over tp, choose_next, and the tokens of tp rank 0 broadcast over tp.
Choice sample_next(Transformer& model, const at::Tensor& last_hidden, const GenerateOptions& options,
                   std::vector<at::Generator>& generators);

// Where each row of a batch stands during decoding: the tokens generated so far, which rows have stopped,
// and the input of the next step. Every pipeline stage keeps one per micro-batch, fed with the tokens the
// last stage samples, so each knows when the micro-batch is finished.
class DecodeRows {
 public:
  DecodeRows(const PaddedPrompts& prompts, const GenerateOptions& options, at::Device device);
  // One step's raw samples (B) and their log-probs (B) fp32; undefined log-probs record zeros (stages
  // without the head). Rows that had already stopped record pad_id and 0.
  void record(const at::Tensor& tokens, const at::Tensor& logprobs);
  // Every row stopped, or max_new_tokens steps were recorded.
  bool finished() const { return finished_; }
  // The next step's input: the last raw samples (B, 1), their positions (B, 1) and validity (B, 1). After
  // finished(), the last step's input again (a rank stepping along with its ep group; outputs unread).
  struct Step {
    at::Tensor tokens, positions, valid;
  };
  Step next_step() const;
  GenerateResult result() const;

 private:
  int64_t max_new_tokens_, pad_id_;
  at::Device device_;
  at::Tensor stop_, done_, lengths_, next_pos_, last_;
  std::vector<at::Tensor> tokens_, logprobs_;
  bool finished_ = false;
};

}  // namespace realign::model
