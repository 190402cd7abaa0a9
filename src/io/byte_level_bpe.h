// ByteLevelBpeTokenizer: HF byte-level BPE as used by GPT-2, LLaMA-3 and Qwen2. Text is split on added
// tokens, optionally NFC-normalised, split by the pre-tokenizer regex, mapped byte -> printable character
// (GPT-2's bytes_to_unicode), then BPE-merged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "io/added_tokens.h"
#include "io/bpe_model.h"
#include "io/pcre2_regex.h"
#include "io/tokenizer.h"

namespace realign::io {

// GPT-2's pre-tokenizer pattern (also HF's ByteLevel pre-tokenizer with use_regex = true).
extern const char* const kGpt2SplitPattern;

class ByteLevelBpeTokenizer : public Tokenizer {
 public:
  // A parsed tokenizer.json; `config` is tokenizer_config.json (null when absent). Errors name `where`.
  static std::unique_ptr<ByteLevelBpeTokenizer> from_tokenizer_json(const nlohmann::json& tokenizer, const nlohmann::json& config,
                                                                    const std::string& where);
  // GPT-2's original files. <|endoftext|> becomes a special added token (bos = eos = unk), as in HF.
  static std::unique_ptr<ByteLevelBpeTokenizer> from_gpt2_files(const std::string& encoder_json,
                                                                const std::string& vocab_bpe);

  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const override;
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const override;
  int64_t vocab_size() const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  std::string id_to_token(int32_t id) const override;

 private:
  ByteLevelBpeTokenizer() = default;
  void encode_ordinary(std::string_view text, std::vector<int32_t>& out) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  std::string where_;
  std::unique_ptr<BpeModel> bpe_;
  AddedTokens added_;
  std::vector<std::unique_ptr<Pcre2Regex>> splits_;  // applied in order; each splits every piece further
  bool add_prefix_space_ = false;
  bool nfc_ = false;
  std::vector<int32_t> prefix_ids_, suffix_ids_;  // the post-processor's single-sequence template
};

}  // namespace realign::io
