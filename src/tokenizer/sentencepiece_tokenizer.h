// SentencePieceTokenizer: a SentencePiece model (tokenizer.model, as LLaMA-1/2 and Mistral ship) through
// Debian's libsentencepiece, loaded in its own module (see sentencepiece_module.cc for why).
#pragma once

#include <memory>
#include <string>

#include "tokenizer/sentencepiece_backend.h"
#include "tokenizer/tokenizer.h"

namespace realign::tokenizer {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Throws Error naming `model_path` when it (or the SentencePiece module) cannot be loaded.
  explicit SentencePieceTokenizer(const std::string& model_path);
  ~SentencePieceTokenizer() override;

  // parse_special has no effect: SentencePiece never matches control symbols in text.
  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const override;
  // Special ids (bos, eos, pad, unk) are written as their pieces ("<s>", "</s>"), or left out with
  // skip_special; the ids between them decode as SentencePiece decodes them.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const override;
  int64_t vocab_size() const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  std::string id_to_token(int32_t id) const override;

 private:
  std::string path_;
  std::unique_ptr<SentencePieceBackend> sp_;
};

// Where the module is looked for: $REALIGN_SENTENCEPIECE_MODULE, then beside the running executable, then
// the build tree's copy.
std::string sentencepiece_module_path();

}  // namespace realign::tokenizer
