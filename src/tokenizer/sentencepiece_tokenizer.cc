#include "tokenizer/sentencepiece_tokenizer.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "core/utf8.h"

namespace realign::tokenizer {

namespace {

constexpr const char* kModuleName = "librealign_sentencepiece.so";

bool readable(const std::string& p) { return ::access(p.c_str(), R_OK) == 0; }

// dlopen()s the module once per process. RTLD_LOCAL keeps its (and libsentencepiece's bundled protobuf)
// symbols out of the global scope; RTLD_DEEPBIND makes libsentencepiece bind to its own copies first.
CreateSentencePieceBackend create_function() {
  static std::once_flag once;
  static CreateSentencePieceBackend create = nullptr;
  static std::string error;
  std::call_once(once, [] {
    const std::string path = sentencepiece_module_path();
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      error = "cannot load the SentencePiece module " + path + ": " + (e ? e : "unknown error");
      return;
    }
    create = reinterpret_cast<CreateSentencePieceBackend>(::dlsym(handle, kCreateSentencePieceBackend));
    if (create == nullptr) error = path + " lacks " + kCreateSentencePieceBackend;
  });
  if (create == nullptr) throw Error("sentencepiece", error);
  return create;
}

}  // namespace

std::string sentencepiece_module_path() {
  if (const char* env = std::getenv("REALIGN_SENTENCEPIECE_MODULE"); env != nullptr && *env) return env;
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string dir(exe, n);
    dir = dir.substr(0, dir.rfind('/'));
    if (readable(dir + "/" + kModuleName)) return dir + "/" + kModuleName;
  }
  return REALIGN_SENTENCEPIECE_MODULE_BUILD_PATH;
}

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_path) : path_(model_path) {
  if (!readable(model_path)) throw Error(model_path, "cannot open");
  std::string error;
  sp_.reset(create_function()(model_path.c_str(), &error));
  if (!sp_) throw Error(model_path, "cannot load SentencePiece model: " + error);
  auto opt = [](int id) { return id >= 0 ? std::optional<int32_t>(id) : std::nullopt; };
  special_.bos = opt(sp_->bos_id());
  special_.eos = opt(sp_->eos_id());
  special_.pad = opt(sp_->pad_id());
  special_.unk = opt(sp_->unk_id());
  if (special_.bos) prefix_ids_ = {*special_.bos};
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text,
                                                    const EncodeOptions& options) const {
  if (auto bad = find_invalid_utf8(text))
    throw Error(path_, "input text is not valid UTF-8 at byte " + std::to_string(*bad));
  std::vector<int> ids;
  std::string error;
  if (!sp_->encode(std::string(text), &ids, &error)) throw Error(path_, "encode failed: " + error);
  std::vector<int32_t> out;
  if (options.add_special_tokens) out = prefix_ids_;
  out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  // libsentencepiece drops control symbols (bos, eos, pad) and writes unk as a question-mark sign: a
  // special id is written as its piece ("<s>", "</s>", "<unk>") between the decoded runs of ordinary ids,
  // as transformers' LlamaTokenizer does, or left out with skip_special.
  auto special = [&](int32_t id) {
    return id == special_.bos || id == special_.eos || id == special_.pad || id == special_.unk;
  };
  std::string out;
  std::vector<int> run;
  auto flush = [&] {
    if (run.empty()) return;
    std::string text, error;
    if (!sp_->decode(run, &text, &error)) throw Error(path_, "decode failed: " + error);
    out += text;
    run.clear();
  };
  for (int32_t id : ids) {
    if (id < 0 || id >= sp_->piece_size())
      throw Error(path_, "token id " + std::to_string(id) + " is not in the vocabulary");
    if (!special(id)) {
      run.push_back(id);
    } else if (!skip_special) {
      flush();
      out += sp_->id_to_piece(id);
    }
  }
  flush();
  return out;
}

int64_t SentencePieceTokenizer::vocab_size() const { return sp_->piece_size(); }

std::optional<int32_t> SentencePieceTokenizer::token_to_id(std::string_view token) const {
  int id = sp_->piece_to_id(std::string(token));
  // Unknown pieces map to unk; only the unk piece itself maps there honestly.
  if (id == sp_->unk_id() && sp_->id_to_piece(id) != token) return std::nullopt;
  return id;
}

std::string SentencePieceTokenizer::id_to_token(int32_t id) const {
  if (id < 0 || id >= sp_->piece_size())
    throw Error(path_, "token id " + std::to_string(id) + " is not in the vocabulary");
  return sp_->id_to_piece(id);
}

}  // namespace realign::tokenizer
