// load_tokenizer: picks the tokenizer kind from the files present.
#include <sys/stat.h>

#include "core/error.h"
#include "core/read_file.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace realign::tokenizer {

namespace {

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

nlohmann::json read_json(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path, "not valid JSON");
  return j;
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::unique_ptr<Tokenizer> from_tokenizer_json(const std::string& path) {
  const std::string config_path = dir_of(path) + "/tokenizer_config.json";
  nlohmann::json config = is_file(config_path) ? read_json(config_path) : nlohmann::json();
  return BpeTokenizer::from_tokenizer_json(read_json(path), config, path);
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir_or_file) {
  if (is_file(dir_or_file)) {
    if (ends_with(dir_or_file, ".json")) return from_tokenizer_json(dir_or_file);
    return std::make_unique<SentencePieceTokenizer>(dir_or_file);
  }
  const std::string d = dir_or_file;
  if (is_file(d + "/tokenizer.json")) return from_tokenizer_json(d + "/tokenizer.json");
  if (is_file(d + "/encoder.json") && is_file(d + "/vocab.bpe"))
    return BpeTokenizer::from_gpt2_files(d + "/encoder.json", d + "/vocab.bpe");
  if (is_file(d + "/tokenizer.model"))
    return std::make_unique<SentencePieceTokenizer>(d + "/tokenizer.model");
  throw Error(dir_or_file,
              "holds no tokenizer (looked for tokenizer.json, encoder.json + vocab.bpe, tokenizer.model)");
}

}  // namespace realign::tokenizer
