// AddedTokens: tokens matched verbatim in the raw text before any pre-tokenization (HF "added_tokens":
// <|endoftext|>, <|begin_of_text|>, ...). Leftmost match wins, the longest one at that position.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace realign::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool lstrip = false;  // also swallow whitespace to the left
  bool rstrip = false;  // ... and to the right
};

// A piece of text: either ordinary text to pre-tokenize, or one added token.
struct TextSegment {
  std::string_view text;
  std::optional<int32_t> added_id;
};

class AddedTokens {
 public:
  void add(AddedToken token);
  // Splits `text`; with `specials` false only non-special added tokens are recognised.
  std::vector<TextSegment> split(std::string_view text, bool specials) const;

  const AddedToken* find_id(int32_t id) const;
  const AddedToken* find_content(std::string_view content) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  std::vector<AddedToken> tokens_;
  std::unordered_map<int32_t, int> by_id_;
  std::vector<std::vector<int>> by_first_byte_ = std::vector<std::vector<int>>(256);
};

}  // namespace realign::tokenizer
