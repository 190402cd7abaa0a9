// BpeTokenizer: HF's BPE tokenizer as tokenizer.json describes it, byte-level (GPT-2, LLaMA-3, Qwen2) or
// SentencePiece-style with byte fallback (LLaMA-2, Mistral, Gemma). Text is split on added tokens; each
// piece between them is normalised, pre-tokenized into words, and BPE-merged within each word.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/text_normalizer.h"
#include "tokenizer/token_decoder.h"
#include "tokenizer/tokenizer.h"

namespace realign::tokenizer {

class BpeTokenizer : public Tokenizer {
 public:
  // A parsed tokenizer.json; `config` is tokenizer_config.json (null when absent). Errors name `where`.
  static std::unique_ptr<BpeTokenizer> from_tokenizer_json(const nlohmann::json& tokenizer,
                                                           const nlohmann::json& config,
                                                           const std::string& where);
  // GPT-2's original files. <|endoftext|> becomes a special added token (bos = eos = unk), as in HF.
  static std::unique_ptr<BpeTokenizer> from_gpt2_files(const std::string& encoder_json,
                                                       const std::string& vocab_bpe);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const override;
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const override;
  int64_t vocab_size() const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  std::string id_to_token(int32_t id) const override;

 private:
  BpeTokenizer() = default;
  void encode_ordinary(std::string_view text, bool at_start, std::vector<int32_t>& out) const;

  std::string where_;
  std::unique_ptr<BpeModel> bpe_;
  AddedTokens added_;
  TextNormalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  TokenDecoder decoder_;
};

}  // namespace realign::tokenizer
