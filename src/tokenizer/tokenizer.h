// Tokenizer: text <-> token ids, one interface over HF byte-level BPE (tokenizer.json; GPT-2's encoder.json +
// vocab.bpe) and SentencePiece models. Implementations are immutable after loading and safe to share across
// threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace realign::tokenizer {

struct SpecialIds {
  std::optional<int32_t> bos, eos, pad, unk;
};

struct EncodeOptions {
  // Add the special tokens transformers adds when it encodes text for the model (see special_prefix()).
  bool add_special_tokens = false;
  // Recognise special/added tokens written in the text ("<|endoftext|>" -> one id). When false they are
  // encoded as ordinary text, as tiktoken does without allowed_special.
  bool parse_special = true;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Throws realign::Error when `text` is not valid UTF-8.
  virtual std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const = 0;
  // Throws realign::Error for ids outside [0, vocab_size()). Byte-level models return the raw bytes, which
  // are valid UTF-8 whenever the ids came from encode() of valid text.
  virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const = 0;
  // One more than the largest id (added tokens included).
  virtual int64_t vocab_size() const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  // The token's string as the model stores it (byte-level models show bytes as their mapped characters).
  virtual std::string id_to_token(int32_t id) const = 0;
  const SpecialIds& special_ids() const { return special_; }
  // What add_special_tokens puts before and after the text, as transformers does: add_bos_token /
  // add_eos_token of tokenizer_config.json where set (LLaMA-family tokenizers), else tokenizer.json's
  // TemplateProcessing post-processor (LLaMA-3 prepends <|begin_of_text|>); BOS for SentencePiece models.
  const std::vector<int32_t>& special_prefix() const { return prefix_ids_; }
  const std::vector<int32_t>& special_suffix() const { return suffix_ids_; }

 protected:
  SpecialIds special_;
  std::vector<int32_t> prefix_ids_, suffix_ids_;
};

// Loads from a directory or a file: tokenizer.json (with tokenizer_config.json beside it for special ids when
// present), GPT-2's encoder.json + vocab.bpe, or a SentencePiece tokenizer.model. Errors name the file.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir_or_file);

}  // namespace realign::tokenizer
