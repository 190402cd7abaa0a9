// A small SentencePiece-style tokenizer.json (byte fallback, Prepend/Replace normaliser, BOS from
// tokenizer_config.json) whose 35 ids fit the built-in tiny models, for the CLI tests.
//   ids: <unk> 0, <s> 1, </s> 2, "▁" 3, a..z 4..29, <0xC3> 30, <0xA9> 31, "▁a" 32, "ab" 33, "▁ab" 34
//   "ab ab" -> ▁ ab ▁ ab = 3 33 3 33 (with BOS: 1 3 33 3 33); "é" -> ▁ <0xC3> <0xA9> = 3 30 31
// Its chat template prints the BOS, then "<first letter of the role> <content> " per turn, and "a" to prompt.
#pragma once

#include <string>

namespace realign::testing {

// Writes tokenizer.json and tokenizer_config.json into `dir` (which must exist).
void write_tiny_tokenizer(const std::string& dir);

}  // namespace realign::testing
