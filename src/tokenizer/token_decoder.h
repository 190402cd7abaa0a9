// TokenDecoder: a tokenizer.json "decoder" turning token strings back into text: ByteLevel, ByteFallback,
// Fuse, Strip, Replace, Metaspace, and Sequences of them. Without one, HF joins the tokens with spaces.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/json.h"

namespace realign::tokenizer {

class TokenDecoder {
 public:
  TokenDecoder() = default;
  // `j` may be null. Unsupported types throw Error naming `path`.type.
  TokenDecoder(const nlohmann::json& j, const std::string& path);
  static TokenDecoder byte_level();
  std::string decode(std::vector<std::string> tokens) const;

 private:
  using Step = std::function<std::vector<std::string>(std::vector<std::string>)>;
  void add(const nlohmann::json& j, const std::string& path);
  std::vector<Step> steps_;
  bool present_ = false;
};

}  // namespace realign::tokenizer
