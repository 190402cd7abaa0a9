// PreTokenizer: a tokenizer.json "pre_tokenizer" that cuts normalised text into the words BPE merges within:
// Split (every delimiter behaviour, invert), ByteLevel (GPT-2's regex and byte -> character map), Metaspace
// (prepend_scheme / add_prefix_space, split), Digits, Whitespace, WhitespaceSplit, and Sequences of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/json.h"

namespace realign::tokenizer {

// GPT-2's pre-tokenizer pattern (also HF's ByteLevel pre-tokenizer with use_regex = true).
extern const char* const kGpt2SplitPattern;

// GPT-2's bytes_to_unicode: byte -> printable character (UTF-8), and back (-1 where a code point is no
// byte's).
const std::string& byte_level_char(uint8_t byte);
int byte_level_byte(uint32_t code_point);

struct PreToken {
  std::string text;
  bool at_start = false;  // begins at offset 0 of the encoded text (Metaspace's prepend_scheme "first")
};

class PreTokenizer {
 public:
  PreTokenizer() = default;
  // `j` may be null (the whole text is one word). Unsupported types throw Error naming `path`.type.
  PreTokenizer(const nlohmann::json& j, const std::string& path);
  // The GPT-2 byte-level pre-tokenizer (for encoder.json + vocab.bpe files).
  static PreTokenizer gpt2();
  std::vector<PreToken> apply(PreToken text) const;
  bool byte_level() const { return byte_level_; }

 private:
  using Step = std::function<std::vector<PreToken>(const PreToken&)>;
  void add(const nlohmann::json& j, const std::string& path);
  std::vector<Step> steps_;
  bool byte_level_ = false;
};

}  // namespace realign::tokenizer
