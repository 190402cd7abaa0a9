#include "io/byte_level_bpe.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <array>
#include <functional>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/utf8.h"

namespace realign::io {

const char* const kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the rest to U+0100 upwards, so every
// byte has a visible, non-space character. kByteChar[b] is that character in UTF-8.
struct ByteTables {
  std::array<std::string, 256> byte_char;
  std::array<int, 324> char_byte;  // code point (< 324) -> byte, -1 if none
  ByteTables() {
    char_byte.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      uint32_t cp = printable ? b : 256 + n++;
      append_utf8(byte_char[b], cp);
      char_byte[cp] = b;
    }
  }
};
const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json parse_json(const std::string& text, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path, "not valid JSON");
  return j;
}

std::string type_of(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw Error(path, "expected an object with a \"type\" string");
  return j["type"].get<std::string>();
}

bool bool_or(const nlohmann::json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it == j.end() || !it->is_boolean() ? fallback : it->get<bool>();
}

// A token named in tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> config_token(const nlohmann::json& config, const char* key) {
  if (!config.is_object()) return std::nullopt;
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

std::unique_ptr<ByteLevelBpeTokenizer> ByteLevelBpeTokenizer::from_tokenizer_json(const nlohmann::json& t, const nlohmann::json& config,
                                                                                  const std::string& where) {
  std::unique_ptr<ByteLevelBpeTokenizer> tok(new ByteLevelBpeTokenizer());
  tok->where_ = where;
  if (!t.is_object()) throw Error(where, "must hold a JSON object");

  // model
  if (!t.contains("model")) throw Error(where, "lacks \"model\"");
  const nlohmann::json& m = t["model"];
  const std::string mpath = where + ": model";
  if (type_of(m, mpath) != "BPE") throw Error(mpath + ".type", "'" + m["type"].get<std::string>() + "' is not supported (supported: BPE)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (m.contains(key) && !m[key].is_null() && !(m[key].is_string() && m[key].get<std::string>().empty()))
      throw Error(mpath + "." + key, "is not supported by the byte-level BPE tokenizer");
  if (bool_or(m, "byte_fallback", false)) throw Error(mpath + ".byte_fallback", "is not supported");
  if (m.contains("dropout") && m["dropout"].is_number() && m["dropout"].get<double>() != 0.0)
    throw Error(mpath + ".dropout", "BPE dropout is not supported");
  if (!m.contains("vocab") || !m["vocab"].is_object()) throw Error(mpath + ".vocab", "must be an object");
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(m["vocab"].size());
  for (auto it = m["vocab"].begin(); it != m["vocab"].end(); ++it)
    vocab[it.key()] = static_cast<int32_t>(json_to_int(it.value(), mpath + ".vocab['" + it.key() + "']"));
  std::vector<std::pair<std::string, std::string>> merges;
  if (!m.contains("merges") || !m["merges"].is_array()) throw Error(mpath + ".merges", "must be a list");
  merges.reserve(m["merges"].size());
  size_t i = 0;
  for (const nlohmann::json& mg : m["merges"]) {
    const std::string mp = index_path(mpath + ".merges", i++);
    if (mg.is_string()) {  // "a b"
      const std::string s = mg.get<std::string>();
      auto sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        throw Error(mp, "'" + s + "' is not two tokens separated by one space");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (mg.is_array() && mg.size() == 2 && mg[0].is_string() && mg[1].is_string()) {  // ["a", "b"]
      merges.emplace_back(mg[0].get<std::string>(), mg[1].get<std::string>());
    } else {
      throw Error(mp, "expected \"a b\" or [\"a\", \"b\"]");
    }
  }
  tok->bpe_ = std::make_unique<BpeModel>(std::move(vocab), merges, bool_or(m, "ignore_merges", false), where);

  // added tokens
  if (t.contains("added_tokens") && t["added_tokens"].is_array()) {
    size_t k = 0;
    for (const nlohmann::json& a : t["added_tokens"]) {
      const std::string ap = index_path(where + ": added_tokens", k++);
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id"))
        throw Error(ap, "expected {\"id\": ..., \"content\": \"...\"}");
      if (bool_or(a, "single_word", false)) throw Error(ap + ".single_word", "single_word added tokens are not supported");
      AddedToken at;
      at.content = a["content"].get<std::string>();
      at.id = static_cast<int32_t>(json_to_int(a["id"], ap + ".id"));
      at.special = bool_or(a, "special", false);
      at.lstrip = bool_or(a, "lstrip", false);
      at.rstrip = bool_or(a, "rstrip", false);
      tok->added_.add(at);
    }
  }

  // normalizer
  if (t.contains("normalizer") && !t["normalizer"].is_null()) {
    const std::string type = type_of(t["normalizer"], where + ": normalizer");
    if (type != "NFC") throw Error(where + ": normalizer.type", "'" + type + "' is not supported (supported: NFC)");
    tok->nfc_ = true;
  }

  // pre-tokenizer: Split(regex, Isolated) and ByteLevel, alone or in a Sequence
  bool byte_level = false;
  std::function<void(const nlohmann::json&, const std::string&)> add_pre = [&](const nlohmann::json& p, const std::string& pp) {
    const std::string type = type_of(p, pp);
    if (type == "Sequence") {
      if (!p.contains("pretokenizers") || !p["pretokenizers"].is_array()) throw Error(pp, "lacks \"pretokenizers\"");
      size_t k = 0;
      for (const nlohmann::json& q : p["pretokenizers"]) add_pre(q, index_path(pp + ".pretokenizers", k++));
    } else if (type == "Split") {
      if (!p.contains("pattern") || !p["pattern"].is_object()) throw Error(pp + ".pattern", "must be an object");
      std::string pattern;
      if (p["pattern"].contains("Regex") && p["pattern"]["Regex"].is_string()) {
        pattern = p["pattern"]["Regex"].get<std::string>();
      } else if (p["pattern"].contains("String") && p["pattern"]["String"].is_string()) {
        // A literal: quote it for PCRE2.
        pattern = "\\Q" + p["pattern"]["String"].get<std::string>() + "\\E";
      } else {
        throw Error(pp + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
      }
      const std::string behavior = p.value("behavior", std::string("Isolated"));
      if (behavior != "Isolated") throw Error(pp + ".behavior", "'" + behavior + "' is not supported (supported: Isolated)");
      if (bool_or(p, "invert", false)) throw Error(pp + ".invert", "inverted splits are not supported");
      tok->splits_.push_back(std::make_unique<Pcre2Regex>(pattern, pp + ".pattern"));
    } else if (type == "ByteLevel") {
      byte_level = true;
      tok->add_prefix_space_ = bool_or(p, "add_prefix_space", false);
      if (bool_or(p, "use_regex", true)) tok->splits_.push_back(std::make_unique<Pcre2Regex>(kGpt2SplitPattern, pp));
    } else {
      throw Error(pp + ".type", "pre-tokenizer '" + type + "' is not supported (supported: Split, ByteLevel, Sequence)");
    }
  };
  if (!t.contains("pre_tokenizer") || t["pre_tokenizer"].is_null())
    throw Error(where, "lacks a pre_tokenizer (only byte-level BPE is supported)");
  add_pre(t["pre_tokenizer"], where + ": pre_tokenizer");
  if (!byte_level) throw Error(where + ": pre_tokenizer", "has no ByteLevel step (only byte-level BPE is supported)");

  // decoder
  if (t.contains("decoder") && !t["decoder"].is_null()) {
    const std::string type = type_of(t["decoder"], where + ": decoder");
    if (type != "ByteLevel") throw Error(where + ": decoder.type", "'" + type + "' is not supported (supported: ByteLevel)");
  }

  // post-processor: the single-sequence template (special tokens around sequence A)
  std::function<void(const nlohmann::json&, const std::string&)> add_post = [&](const nlohmann::json& p, const std::string& pp) {
    const std::string type = type_of(p, pp);
    if (type == "Sequence") {
      size_t k = 0;
      for (const nlohmann::json& q : p.value("processors", nlohmann::json::array())) add_post(q, index_path(pp + ".processors", k++));
    } else if (type == "TemplateProcessing") {
      bool after = false;
      size_t k = 0;
      for (const nlohmann::json& piece : p.value("single", nlohmann::json::array())) {
        const std::string ip = index_path(pp + ".single", k++);
        if (piece.contains("Sequence")) {
          after = true;
        } else if (piece.contains("SpecialToken")) {
          const std::string name = piece["SpecialToken"].value("id", std::string());
          const nlohmann::json& st = p.value("special_tokens", nlohmann::json::object());
          if (!st.contains(name) || !st[name].contains("ids") || !st[name]["ids"].is_array())
            throw Error(ip, "special token '" + name + "' is not in special_tokens");
          for (const nlohmann::json& id : st[name]["ids"])
            (after ? tok->suffix_ids_ : tok->prefix_ids_).push_back(static_cast<int32_t>(json_to_int(id, ip)));
        } else {
          throw Error(ip, "expected a Sequence or a SpecialToken");
        }
      }
    } else if (type != "ByteLevel") {
      throw Error(pp + ".type", "post-processor '" + type + "' is not supported (supported: TemplateProcessing, ByteLevel, Sequence)");
    }
  };
  if (t.contains("post_processor") && !t["post_processor"].is_null()) add_post(t["post_processor"], where + ": post_processor");

  // special ids: tokenizer_config.json when present, else the template's leading token and well-known names
  auto id_of = [&](const std::optional<std::string>& s) -> std::optional<int32_t> {
    return s ? tok->token_to_id(*s) : std::nullopt;
  };
  if (config.is_object()) {
    tok->special_.bos = id_of(config_token(config, "bos_token"));
    tok->special_.eos = id_of(config_token(config, "eos_token"));
    tok->special_.pad = id_of(config_token(config, "pad_token"));
    tok->special_.unk = id_of(config_token(config, "unk_token"));
  } else {
    if (!tok->prefix_ids_.empty()) tok->special_.bos = tok->prefix_ids_.front();
    for (const char* name : {"<|end_of_text|>", "<|endoftext|>", "</s>"})
      if (!tok->special_.eos) tok->special_.eos = tok->token_to_id(name);
    if (!tok->special_.bos) tok->special_.bos = id_of(std::string("<|begin_of_text|>"));
  }
  return tok;
}

std::unique_ptr<ByteLevelBpeTokenizer> ByteLevelBpeTokenizer::from_gpt2_files(const std::string& encoder_json,
                                                                              const std::string& vocab_bpe) {
  std::unique_ptr<ByteLevelBpeTokenizer> tok(new ByteLevelBpeTokenizer());
  tok->where_ = encoder_json;
  nlohmann::json enc = parse_json(read_text(encoder_json), encoder_json);
  if (!enc.is_object()) throw Error(encoder_json, "must hold a JSON object of token -> id");
  std::unordered_map<std::string, int32_t> vocab;
  for (auto it = enc.begin(); it != enc.end(); ++it)
    vocab[it.key()] = static_cast<int32_t>(json_to_int(it.value(), encoder_json + ": '" + it.key() + "'"));
  std::istringstream lines(read_text(vocab_bpe));
  std::vector<std::pair<std::string, std::string>> merges;
  std::string line;
  int lineno = 0;
  while (std::getline(lines, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (lineno == 1 && line.rfind("#version", 0) == 0)) continue;
    auto sp = line.find(' ');
    if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
      throw Error(vocab_bpe + ":" + std::to_string(lineno), "'" + line + "' is not two tokens separated by one space");
    merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
  }
  auto eot = vocab.find("<|endoftext|>");
  std::optional<int32_t> eot_id;
  if (eot != vocab.end()) eot_id = eot->second;
  tok->bpe_ = std::make_unique<BpeModel>(std::move(vocab), merges, false, vocab_bpe);
  tok->splits_.push_back(std::make_unique<Pcre2Regex>(kGpt2SplitPattern, "gpt2 pattern"));
  if (eot_id) {
    tok->added_.add({"<|endoftext|>", *eot_id, /*special=*/true, false, false});
    tok->special_.bos = tok->special_.eos = tok->special_.unk = eot_id;
  }
  return tok;
}

void ByteLevelBpeTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  const auto& tables = byte_tables();
  std::string mapped;
  std::vector<size_t> ends;
  for (char c : piece) {
    mapped += tables.byte_char[static_cast<uint8_t>(c)];
    ends.push_back(mapped.size());
  }
  std::vector<std::string_view> symbols;
  size_t b = 0;
  for (size_t e : ends) {
    symbols.emplace_back(mapped.data() + b, e - b);
    b = e;
  }
  for (int32_t id : bpe_->encode_word(symbols, mapped)) out.push_back(id);
}

void ByteLevelBpeTokenizer::encode_ordinary(std::string_view text, std::vector<int32_t>& out) const {
  std::string storage;
  if (nfc_) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status)) throw Error(where_, "ICU NFC normaliser is unavailable");
    icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    icu::UnicodeString n = nfc->normalize(u, status);
    if (U_FAILURE(status)) throw Error(where_, "NFC normalisation failed");
    n.toUTF8String(storage);
    text = storage;
  }
  std::string prefixed;
  if (add_prefix_space_ && !text.empty() && text[0] != ' ') {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  // Each split pattern cuts every piece further (Isolated: matches and the gaps between them are pieces).
  std::vector<std::string_view> pieces = {text};
  for (const auto& re : splits_) {
    std::vector<std::string_view> next;
    for (std::string_view p : pieces) {
      size_t cursor = 0;
      for (auto [b, e] : re->find_all(p)) {
        if (b > cursor) next.push_back(p.substr(cursor, b - cursor));
        next.push_back(p.substr(b, e - b));
        cursor = e;
      }
      if (cursor < p.size()) next.push_back(p.substr(cursor));
    }
    pieces = std::move(next);
  }
  for (std::string_view p : pieces) encode_piece(p, out);
}

std::vector<int32_t> ByteLevelBpeTokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  if (auto bad = find_invalid_utf8(text))
    throw Error(where_, "input text is not valid UTF-8 at byte " + std::to_string(*bad));
  std::vector<int32_t> out;
  if (options.add_special_tokens) out = prefix_ids_;
  for (const TextSegment& seg : added_.split(text, options.parse_special)) {
    if (seg.added_id) out.push_back(*seg.added_id);
    else encode_ordinary(seg.text, out);
  }
  if (options.add_special_tokens) out.insert(out.end(), suffix_ids_.begin(), suffix_ids_.end());
  return out;
}

std::string ByteLevelBpeTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  const auto& tables = byte_tables();
  std::string out;
  for (int32_t id : ids) {
    if (const AddedToken* a = added_.find_id(id)) {
      if (!(skip_special && a->special)) out += a->content;
      continue;
    }
    if (!bpe_->has_id(id)) throw Error(where_, "token id " + std::to_string(id) + " is not in the vocabulary");
    const std::string& tok = bpe_->token(id);
    size_t pos = 0;
    while (pos < tok.size()) {
      uint32_t cp = next_code_point(tok, pos);
      int byte = cp < tables.char_byte.size() ? tables.char_byte[cp] : -1;
      if (byte < 0) throw Error(where_, "token " + std::to_string(id) + " '" + tok + "' is not byte-level");
      out += static_cast<char>(byte);
    }
  }
  return out;
}

int64_t ByteLevelBpeTokenizer::vocab_size() const {
  int64_t n = bpe_->size();
  for (const auto& a : added_.tokens()) n = std::max<int64_t>(n, a.id + 1);
  return n;
}

std::optional<int32_t> ByteLevelBpeTokenizer::token_to_id(std::string_view token) const {
  if (const AddedToken* a = added_.find_content(token)) return a->id;
  return bpe_->find(token);
}

std::string ByteLevelBpeTokenizer::id_to_token(int32_t id) const {
  if (const AddedToken* a = added_.find_id(id)) return a->content;
  if (!bpe_->has_id(id)) throw Error(where_, "token id " + std::to_string(id) + " is not in the vocabulary");
  return bpe_->token(id);
}

}  // namespace realign::io
