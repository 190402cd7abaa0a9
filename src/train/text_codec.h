// TextCodec: text <-> token ids for training. Built-in models (vocabulary >= 256) use bytes as tokens, with
// "\n" as the stop token and 0 as padding; a model directory with a tokenizer.json uses that tokenizer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/tokenizer.h"
#include "runtime/sequence_batch.h"

namespace realign::runtime {

class TextCodec {
 public:
  // Bytes as tokens.
  static TextCodec bytes();
  // The tokenizer of a model directory; "\n" (and the eos token, if any) stop generation.
  static TextCodec from_tokenizer(std::shared_ptr<io::Tokenizer> tokenizer);

  TokenIds encode(const std::string& text) const;
  std::string decode(const TokenIds& ids) const;
  const std::vector<int64_t>& stop_tokens() const { return stop_; }
  int64_t pad_id() const { return pad_; }
  int64_t vocab_size() const;

 private:
  std::shared_ptr<io::Tokenizer> tokenizer_;  // null: bytes
  std::vector<int64_t> stop_;
  int64_t pad_ = 0;
};

}  // namespace realign::runtime
