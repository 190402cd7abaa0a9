// TextNormalizer: a tokenizer.json "normalizer" (NFC/NFD/NFKC/NFKD, Replace, Prepend, Strip, Lowercase, and
// Sequences of them, empty ones included), applied to each piece of text between added tokens.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/json.h"

namespace realign::tokenizer {

class TextNormalizer {
 public:
  TextNormalizer() = default;
  // `j` may be null (no normalisation). Unsupported types throw Error naming `path`.type.
  TextNormalizer(const nlohmann::json& j, const std::string& path);
  std::string apply(std::string text) const;
  bool empty() const { return steps_.empty(); }

 private:
  void add(const nlohmann::json& j, const std::string& path);
  std::vector<std::function<std::string(std::string)>> steps_;
};

// Unicode normal forms through ICU; `form` is "NFC", "NFD", "NFKC" or "NFKD".
std::string unicode_normalize(const std::string& text, const std::string& form);

}  // namespace realign::tokenizer
