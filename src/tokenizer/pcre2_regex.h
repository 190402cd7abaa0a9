// Pcre2Regex: a compiled PCRE2 pattern in UTF + UCP mode (\p{L}, \s, case folding by Unicode properties),
// used for the tokenizers' pre-tokenizer Split patterns.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace realign::tokenizer {

class Pcre2Regex {
 public:
  // Throws realign::Error naming `where` and the position when the pattern does not compile.
  Pcre2Regex(const std::string& pattern, const std::string& where);
  ~Pcre2Regex();
  Pcre2Regex(const Pcre2Regex&) = delete;
  Pcre2Regex& operator=(const Pcre2Regex&) = delete;

  // Non-overlapping matches [begin, end) left to right; empty matches are skipped. `text` must be valid
  // UTF-8 (checked by the caller).
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  void* code_ = nullptr;  // pcre2_code_8*, kept opaque so users need no PCRE2 header
};

}  // namespace realign::tokenizer
