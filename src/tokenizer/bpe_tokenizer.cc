#include "tokenizer/bpe_tokenizer.h"

#include <functional>
#include <sstream>

#include "core/error.h"
#include "core/read_file.h"
#include "core/utf8.h"
#include "tokenizer/tokenizer_json_util.h"

namespace realign::tokenizer {

namespace {

nlohmann::json parse_json(const std::string& text, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path, "not valid JSON");
  return j;
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

std::string config_path_beside(const std::string& tokenizer_json) {
  const auto slash = tokenizer_json.rfind('/');
  return (slash == std::string::npos ? std::string() : tokenizer_json.substr(0, slash + 1)) +
         "tokenizer_config.json";
}

std::vector<std::pair<std::string, std::string>> parse_merges(const nlohmann::json& m,
                                                              const std::string& mpath) {
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
  return merges;
}

std::unique_ptr<BpeModel> parse_model(const nlohmann::json& m, const std::string& mpath,
                                      const std::string& where) {
  const std::string type = json_piece_type(m, mpath);
  if (type != "BPE") throw Error(mpath + ".type", "model '" + type + "' is not supported (supported: BPE)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (m.contains(key) && !m[key].is_null() && !(m[key].is_string() && m[key].get<std::string>().empty()))
      throw Error(mpath + "." + key, "is not supported (BPE with word prefixes/suffixes)");
  if (m.contains("dropout") && m["dropout"].is_number() && m["dropout"].get<double>() != 0.0)
    throw Error(mpath + ".dropout", "BPE dropout is not supported");
  if (!m.contains("vocab") || !m["vocab"].is_object()) throw Error(mpath + ".vocab", "must be an object");
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(m["vocab"].size());
  for (auto it = m["vocab"].begin(); it != m["vocab"].end(); ++it)
    vocab[it.key()] = static_cast<int32_t>(json_to_int(it.value(), mpath + ".vocab['" + it.key() + "']"));
  BpeUnknown unknown;
  unknown.byte_fallback = json_bool_or(m, "byte_fallback", false);
  unknown.fuse_unk = json_bool_or(m, "fuse_unk", false);
  if (m.contains("unk_token") && !m["unk_token"].is_null()) {
    const std::string unk = json_required_string(m, "unk_token", mpath);
    auto it = vocab.find(unk);
    if (it == vocab.end()) throw Error(mpath + ".unk_token", "'" + unk + "' is not in the vocab");
    unknown.unk_id = it->second;
  }
  return std::make_unique<BpeModel>(std::move(vocab), parse_merges(m, mpath),
                                    json_bool_or(m, "ignore_merges", false), where, unknown);
}

// The post-processor's single-sequence template: special ids before and after sequence A.
void parse_post_processor(const nlohmann::json& p, const std::string& pp, std::vector<int32_t>& prefix,
                          std::vector<int32_t>& suffix) {
  const std::string type = json_piece_type(p, pp);
  if (type == "Sequence") {
    size_t k = 0;
    for (const nlohmann::json& q : p.value("processors", nlohmann::json::array()))
      parse_post_processor(q, index_path(pp + ".processors", k++), prefix, suffix);
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
          (after ? suffix : prefix).push_back(static_cast<int32_t>(json_to_int(id, ip)));
      } else {
        throw Error(ip, "expected a Sequence or a SpecialToken");
      }
    }
  } else if (type != "ByteLevel") {
    throw Error(pp + ".type", "post-processor '" + type +
                                  "' is not supported (supported: TemplateProcessing, ByteLevel, Sequence)");
  }
}

}  // namespace

std::unique_ptr<BpeTokenizer> BpeTokenizer::from_tokenizer_json(const nlohmann::json& t,
                                                                const nlohmann::json& config,
                                                                const std::string& where) {
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  tok->where_ = where;
  if (!t.is_object()) throw Error(where, "must hold a JSON object");
  if (!t.contains("model")) throw Error(where, "lacks \"model\"");
  tok->bpe_ = parse_model(t["model"], where + ": model", where);

  if (t.contains("added_tokens") && t["added_tokens"].is_array()) {
    size_t k = 0;
    for (const nlohmann::json& a : t["added_tokens"]) {
      const std::string ap = index_path(where + ": added_tokens", k++);
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id"))
        throw Error(ap, "expected {\"id\": ..., \"content\": \"...\"}");
      if (json_bool_or(a, "single_word", false))
        throw Error(ap + ".single_word", "single_word added tokens are not supported");
      AddedToken at;
      at.content = a["content"].get<std::string>();
      at.id = static_cast<int32_t>(json_to_int(a["id"], ap + ".id"));
      at.special = json_bool_or(a, "special", false);
      at.lstrip = json_bool_or(a, "lstrip", false);
      at.rstrip = json_bool_or(a, "rstrip", false);
      tok->added_.add(at);
    }
  }

  const nlohmann::json null;
  auto piece = [&](const char* key) -> const nlohmann::json& { return t.contains(key) ? t[key] : null; };
  tok->normalizer_ = TextNormalizer(piece("normalizer"), where + ": normalizer");
  tok->pre_tokenizer_ = PreTokenizer(piece("pre_tokenizer"), where + ": pre_tokenizer");
  tok->decoder_ = TokenDecoder(piece("decoder"), where + ": decoder");
  if (!piece("post_processor").is_null())
    parse_post_processor(t["post_processor"], where + ": post_processor", tok->prefix_ids_, tok->suffix_ids_);

  // Special ids: tokenizer_config.json when present, else the template's leading token and well-known names.
  auto id_of = [&](const std::optional<std::string>& s) -> std::optional<int32_t> {
    return s ? tok->token_to_id(*s) : std::nullopt;
  };
  if (config.is_object()) {
    tok->special_.bos = id_of(config_token(config, "bos_token"));
    tok->special_.eos = id_of(config_token(config, "eos_token"));
    tok->special_.pad = id_of(config_token(config, "pad_token"));
    tok->special_.unk = id_of(config_token(config, "unk_token"));
    // transformers' LLaMA-family fast tokenizers (LLaMA-2, Mistral, Gemma, DeepSeek) rebuild the template
    // from add_bos_token / add_eos_token when the config sets them; that is what the model is fed.
    const bool has_bos_flag = config.contains("add_bos_token") && config["add_bos_token"].is_boolean();
    const bool has_eos_flag = config.contains("add_eos_token") && config["add_eos_token"].is_boolean();
    if (has_bos_flag || has_eos_flag) {
      auto flagged = [&](bool has, const char* flag, const char* name, const std::optional<int32_t>& id) {
        std::vector<int32_t> ids;
        if (!has || !config[flag].get<bool>()) return ids;
        if (!id)
          throw Error(config_path_beside(where) + ": " + flag,
                      std::string("is true but ") + name + " is not a token of the vocabulary");
        ids.push_back(*id);
        return ids;
      };
      tok->prefix_ids_ = flagged(has_bos_flag, "add_bos_token", "bos_token", tok->special_.bos);
      tok->suffix_ids_ = flagged(has_eos_flag, "add_eos_token", "eos_token", tok->special_.eos);
    }
  } else {
    if (!tok->prefix_ids_.empty()) tok->special_.bos = tok->prefix_ids_.front();
    for (const char* name : {"<|end_of_text|>", "<|endoftext|>", "</s>"})
      if (!tok->special_.eos) tok->special_.eos = tok->token_to_id(name);
    if (!tok->special_.bos) tok->special_.bos = id_of(std::string("<|begin_of_text|>"));
  }
  return tok;
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::from_gpt2_files(const std::string& encoder_json,
                                                            const std::string& vocab_bpe) {
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  tok->where_ = encoder_json;
  nlohmann::json enc = parse_json(read_file(encoder_json), encoder_json);
  if (!enc.is_object()) throw Error(encoder_json, "must hold a JSON object of token -> id");
  std::unordered_map<std::string, int32_t> vocab;
  for (auto it = enc.begin(); it != enc.end(); ++it)
    vocab[it.key()] = static_cast<int32_t>(json_to_int(it.value(), encoder_json + ": '" + it.key() + "'"));
  std::istringstream lines(read_file(vocab_bpe));
  std::vector<std::pair<std::string, std::string>> merges;
  std::string line;
  int lineno = 0;
  while (std::getline(lines, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (lineno == 1 && line.rfind("#version", 0) == 0)) continue;
    auto sp = line.find(' ');
    if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
      throw Error(vocab_bpe + ":" + std::to_string(lineno),
                  "'" + line + "' is not two tokens separated by one space");
    merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
  }
  auto eot = vocab.find("<|endoftext|>");
  std::optional<int32_t> eot_id;
  if (eot != vocab.end()) eot_id = eot->second;
  tok->bpe_ = std::make_unique<BpeModel>(std::move(vocab), merges, false, vocab_bpe);
  tok->pre_tokenizer_ = PreTokenizer::gpt2();
  tok->decoder_ = TokenDecoder::byte_level();
  if (eot_id) {
    tok->added_.add({"<|endoftext|>", *eot_id, /*special=*/true, false, false});
    tok->special_.bos = tok->special_.eos = tok->special_.unk = eot_id;
  }
  return tok;
}

void BpeTokenizer::encode_ordinary(std::string_view text, bool at_start, std::vector<int32_t>& out) const {
  const std::string normalized = normalizer_.apply(std::string(text));
  for (const PreToken& word : pre_tokenizer_.apply({normalized, at_start})) {
    std::vector<std::string_view> symbols;  // one per character
    for (size_t pos = 0; pos < word.text.size();) {
      const size_t begin = pos;
      next_code_point(word.text, pos);
      symbols.emplace_back(word.text.data() + begin, pos - begin);
    }
    for (int32_t id : bpe_->encode_word(symbols, word.text)) out.push_back(id);
  }
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  if (auto bad = find_invalid_utf8(text))
    throw Error(where_, "input text is not valid UTF-8 at byte " + std::to_string(*bad));
  std::vector<int32_t> out;
  if (options.add_special_tokens) out = prefix_ids_;
  for (const TextSegment& seg : added_.split(text, options.parse_special)) {
    if (seg.added_id)
      out.push_back(*seg.added_id);
    else
      encode_ordinary(seg.text, seg.text.data() == text.data(), out);
  }
  if (options.add_special_tokens) out.insert(out.end(), suffix_ids_.begin(), suffix_ids_.end());
  return out;
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (const AddedToken* a = added_.find_id(id)) {
      if (!(skip_special && a->special)) tokens.push_back(a->content);
      continue;
    }
    if (!bpe_->has_id(id))
      throw Error(where_, "token id " + std::to_string(id) + " is not in the vocabulary");
    tokens.push_back(bpe_->token(id));
  }
  return decoder_.decode(std::move(tokens));
}

int64_t BpeTokenizer::vocab_size() const {
  int64_t n = bpe_->size();
  for (const auto& a : added_.tokens()) n = std::max<int64_t>(n, a.id + 1);
  return n;
}

std::optional<int32_t> BpeTokenizer::token_to_id(std::string_view token) const {
  if (const AddedToken* a = added_.find_content(token)) return a->id;
  return bpe_->find(token);
}

std::string BpeTokenizer::id_to_token(int32_t id) const {
  if (const AddedToken* a = added_.find_id(id)) return a->content;
  if (!bpe_->has_id(id)) throw Error(where_, "token id " + std::to_string(id) + " is not in the vocabulary");
  return bpe_->token(id);
}

}  // namespace realign::tokenizer
