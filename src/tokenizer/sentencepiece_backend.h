// SentencePieceBackend: the few SentencePiece calls realign needs, behind a virtual interface so the real
// library can live in a separately loaded module (sentencepiece_module.cc; see sentencepiece_tokenizer.cc).
#pragma once

#include <string>
#include <vector>

namespace realign::tokenizer {

class SentencePieceBackend {
 public:
  virtual ~SentencePieceBackend() = default;
  // Each returns false and sets *error on failure.
  virtual bool encode(const std::string& text, std::vector<int>* ids, std::string* error) const = 0;
  virtual bool decode(const std::vector<int>& ids, std::string* out, std::string* error) const = 0;
  virtual int piece_size() const = 0;
  virtual int bos_id() const = 0;  // -1 when undefined
  virtual int eos_id() const = 0;
  virtual int pad_id() const = 0;
  virtual int unk_id() const = 0;
  virtual int piece_to_id(const std::string& piece) const = 0;  // unk_id() for unknown pieces
  virtual std::string id_to_piece(int id) const = 0;
};

// The module's one entry point (C linkage, found with dlsym): loads `path`, or returns null with *error set.
using CreateSentencePieceBackend = SentencePieceBackend* (*)(const char* path, std::string* error);
constexpr const char* kCreateSentencePieceBackend = "realign_create_sentencepiece_backend";

}  // namespace realign::tokenizer
