#include "train/text_codec.h"

#include "core/error.h"

namespace realign::runtime {

TextCodec TextCodec::bytes() {
  TextCodec c;
  c.stop_ = {int64_t('\n')};
  return c;
}

TextCodec TextCodec::from_tokenizer(std::shared_ptr<io::Tokenizer> tokenizer) {
  TextCodec c;
  c.tokenizer_ = std::move(tokenizer);
  std::vector<int32_t> nl = c.tokenizer_->encode("\n");
  if (nl.size() == 1) c.stop_.push_back(nl[0]);
  io::SpecialIds special = c.tokenizer_->special_ids();
  if (special.eos) c.stop_.push_back(*special.eos);
  if (special.pad)
    c.pad_ = *special.pad;
  else if (special.eos)
    c.pad_ = *special.eos;
  if (c.stop_.empty())
    throw Error("tokenizer", "has neither a single-token newline nor an eos token to stop on");
  return c;
}

TokenIds TextCodec::encode(const std::string& text) const {
  if (!tokenizer_) return TokenIds(text.begin(), text.end());
  std::vector<int32_t> ids = tokenizer_->encode(text);
  return TokenIds(ids.begin(), ids.end());
}

std::string TextCodec::decode(const TokenIds& ids) const {
  if (!tokenizer_) {
    std::string s;
    for (int64_t id : ids) s += char(id);
    return s;
  }
  return tokenizer_->decode(std::vector<int32_t>(ids.begin(), ids.end()));
}

int64_t TextCodec::vocab_size() const { return tokenizer_ ? tokenizer_->vocab_size() : 256; }

}  // namespace realign::runtime
