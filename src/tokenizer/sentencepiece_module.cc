// The SentencePiece module: a shared object that alone links Debian's libsentencepiece. That library carries
// its own copy of protobuf-lite 3.14 with exported symbols; in a process that also holds torch's libprotobuf
// 3.21 either copy binds to the other's symbols and the process aborts (version check) or crashes at
// start-up. sentencepiece_tokenizer.cc therefore dlopen()s this module with RTLD_LOCAL | RTLD_DEEPBIND.
#include <sentencepiece_processor.h>

#include "tokenizer/sentencepiece_backend.h"

namespace realign::tokenizer {
namespace {

class Backend : public SentencePieceBackend {
 public:
  bool load(const char* path, std::string* error) {
    auto status = sp_.Load(path);
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }
  bool encode(const std::string& text, std::vector<int>* ids, std::string* error) const override {
    auto status = sp_.Encode(text, ids);
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }
  bool decode(const std::vector<int>& ids, std::string* out, std::string* error) const override {
    auto status = sp_.Decode(ids, out);
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }
  int piece_size() const override { return sp_.GetPieceSize(); }
  int bos_id() const override { return sp_.bos_id(); }
  int eos_id() const override { return sp_.eos_id(); }
  int pad_id() const override { return sp_.pad_id(); }
  int unk_id() const override { return sp_.unk_id(); }
  int piece_to_id(const std::string& piece) const override { return sp_.PieceToId(piece); }
  std::string id_to_piece(int id) const override { return sp_.IdToPiece(id); }

 private:
  sentencepiece::SentencePieceProcessor sp_;
};

}  // namespace
}  // namespace realign::tokenizer

extern "C" __attribute__((visibility("default"))) realign::tokenizer::SentencePieceBackend*
realign_create_sentencepiece_backend(const char* path, std::string* error) {
  auto* b = new realign::tokenizer::Backend();
  if (!b->load(path, error)) {
    delete b;
    return nullptr;
  }
  return b;
}
