// TextCodec: text <-> token ids for training. Built-in models (vocabulary >= 256) use bytes as tokens, with
// "\n" as the stop token and 0 as padding; a model directory with a tokenizer.json uses that tokenizer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/sequence_batch.h"
#include "tokenizer/tokenizer.h"

namespace realign::train {

class TextCodec {
 public:
  // Bytes as tokens.
  static TextCodec bytes();
  // The tokenizer of a model directory; "\n" (and the eos token, if any) stop generation. With
  // `special_tokens`, prompts begin with the tokenizer's special prefix (BOS), as transformers feeds them.
  static TextCodec from_tokenizer(std::shared_ptr<tokenizer::Tokenizer> tokenizer,
                                  bool special_tokens = true);

  // Text that continues a sequence (responses): no special tokens.
  runtime::TokenIds encode(const std::string& text) const;
  // Text that begins a sequence (prompts): the special prefix first, unless the text already begins with it.
  runtime::TokenIds encode_prompt(const std::string& text) const;
  std::string decode(const runtime::TokenIds& ids) const;
  const std::vector<int64_t>& stop_tokens() const { return stop_; }
  int64_t pad_id() const { return pad_; }
  int64_t vocab_size() const;

 private:
  std::shared_ptr<tokenizer::Tokenizer> tokenizer_;  // null: bytes
  bool special_tokens_ = false;
  std::vector<int64_t> stop_;
  int64_t pad_ = 0;
};

}  // namespace realign::train
