#include "train/text_codec.h"

#include <algorithm>

#include "core/error.h"

namespace realign::train {

TextCodec TextCodec::bytes() {
  TextCodec c;
  c.stop_ = {int64_t('\n')};
  return c;
}

TextCodec TextCodec::from_tokenizer(std::shared_ptr<tokenizer::Tokenizer> tokenizer, bool special_tokens) {
  TextCodec c;
  c.tokenizer_ = std::move(tokenizer);
  c.special_tokens_ = special_tokens;
  std::vector<int32_t> nl = c.tokenizer_->encode("\n");
  if (nl.size() == 1) c.stop_.push_back(nl[0]);
  tokenizer::SpecialIds special = c.tokenizer_->special_ids();
  if (special.eos) c.stop_.push_back(*special.eos);
  if (special.pad)
    c.pad_ = *special.pad;
  else if (special.eos)
    c.pad_ = *special.eos;
  if (c.stop_.empty())
    throw Error("tokenizer", "has neither a single-token newline nor an eos token to stop on");
  return c;
}

runtime::TokenIds TextCodec::encode(const std::string& text) const {
  if (!tokenizer_) return runtime::TokenIds(text.begin(), text.end());
  std::vector<int32_t> ids = tokenizer_->encode(text);
  return runtime::TokenIds(ids.begin(), ids.end());
}

runtime::TokenIds TextCodec::encode_prompt(const std::string& text) const {
  runtime::TokenIds ids = encode(text);
  if (tokenizer_ && special_tokens_) {
    const std::vector<int32_t>& prefix = tokenizer_->special_prefix();
    // A prompt rendered by a chat template already starts with the BOS it prints: not a second one (as TRL).
    const bool present = ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
    if (!present) ids.insert(ids.begin(), prefix.begin(), prefix.end());
  }
  return ids;
}

std::string TextCodec::decode(const runtime::TokenIds& ids) const {
  if (!tokenizer_) {
    std::string s;
    for (int64_t id : ids) s += char(id);
    return s;
  }
  return tokenizer_->decode(std::vector<int32_t>(ids.begin(), ids.end()));
}

int64_t TextCodec::vocab_size() const { return tokenizer_ ? tokenizer_->vocab_size() : 256; }

}  // namespace realign::train
