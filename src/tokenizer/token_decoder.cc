#include "tokenizer/token_decoder.h"

#include <memory>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer_json_util.h"

namespace realign::tokenizer {

namespace {

const char* const kReplacementChar = "\xef\xbf\xbd";  // U+FFFD

// Byte-level characters back to bytes; a token with any other character keeps its own bytes (added tokens).
// The result is the raw bytes, not lossily repaired: ids from encode() of valid text give valid UTF-8.
std::vector<std::string> byte_level_decode(std::vector<std::string> tokens) {
  std::string out;
  for (const std::string& t : tokens) {
    std::string bytes;
    bool mapped = true;
    for (size_t pos = 0; pos < t.size() && mapped;) {
      int b = byte_level_byte(next_code_point(t, pos));
      if (b < 0)
        mapped = false;
      else
        bytes += static_cast<char>(b);
    }
    out += mapped ? bytes : t;
  }
  return {out};
}

// <0xAB> tokens gathered into bytes; a run that is not valid UTF-8 gives one U+FFFD per byte, as HF does.
std::vector<std::string> byte_fallback_decode(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string pending;
  size_t pending_count = 0;
  auto flush = [&] {
    if (pending_count == 0) return;
    if (!find_invalid_utf8(pending)) {
      out.push_back(pending);
    } else {
      for (size_t i = 0; i < pending_count; ++i) out.push_back(kReplacementChar);
    }
    pending.clear();
    pending_count = 0;
  };
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::string& t : tokens) {
    if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex(t[3]) >= 0 && hex(t[4]) >= 0) {
      pending += static_cast<char>(hex(t[3]) * 16 + hex(t[4]));
      ++pending_count;
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  return out;
}

// Removes up to `n` leading (or trailing) copies of the character `c`.
std::string strip_chars(const std::string& t, const std::string& c, size_t start, size_t stop) {
  size_t b = 0, e = t.size();
  for (size_t i = 0; i < start && e - b >= c.size() && t.compare(b, c.size(), c) == 0; ++i) b += c.size();
  for (size_t i = 0; i < stop && e - b >= c.size() && t.compare(e - c.size(), c.size(), c) == 0; ++i)
    e -= c.size();
  return t.substr(b, e - b);
}

size_t json_count(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.contains(key)) return 0;
  int64_t n = json_to_int(j[key], path + "." + key);
  if (n < 0) throw Error(path + "." + key, "must not be negative");
  return static_cast<size_t>(n);
}

}  // namespace

TokenDecoder::TokenDecoder(const nlohmann::json& j, const std::string& path) {
  if (!j.is_null()) {
    present_ = true;
    add(j, path);
  }
}

TokenDecoder TokenDecoder::byte_level() {
  return TokenDecoder({{"type", "ByteLevel"}}, "byte-level decoder");
}

void TokenDecoder::add(const nlohmann::json& j, const std::string& path) {
  const std::string type = json_piece_type(j, path);
  if (type == "Sequence") {
    for_each_json_item(j, "decoders", path,
                       [this](const nlohmann::json& q, const std::string& qp) { add(q, qp); });
  } else if (type == "ByteLevel") {
    steps_.push_back(byte_level_decode);
  } else if (type == "ByteFallback") {
    steps_.push_back(byte_fallback_decode);
  } else if (type == "Fuse") {
    steps_.push_back([](std::vector<std::string> tokens) {
      std::string all;
      for (const std::string& t : tokens) all += t;
      return std::vector<std::string>{all};
    });
  } else if (type == "Strip") {
    const std::string c = json_required_string(j, "content", path);
    const size_t start = json_count(j, "start", path), stop = json_count(j, "stop", path);
    steps_.push_back([c, start, stop](std::vector<std::string> tokens) {
      for (std::string& t : tokens) t = strip_chars(t, c, start, stop);
      return tokens;
    });
  } else if (type == "Replace") {
    std::shared_ptr<Pcre2Regex> re = json_pattern(j.value("pattern", nlohmann::json()), path + ".pattern");
    const std::string content = json_required_string(j, "content", path);
    steps_.push_back([re, content](std::vector<std::string> tokens) {
      for (std::string& t : tokens) t = replace_all(*re, t, content);
      return tokens;
    });
  } else if (type == "Metaspace") {
    const std::string rep = json_required_string(j, "replacement", path);
    bool prepend = json_bool_or(j, "add_prefix_space", true);
    if (j.contains("prepend_scheme") && j["prepend_scheme"].is_string())
      prepend = j["prepend_scheme"].get<std::string>() != "never";
    std::shared_ptr<Pcre2Regex> re = std::make_shared<Pcre2Regex>("\\Q" + rep + "\\E", path + ".replacement");
    steps_.push_back([re, prepend](std::vector<std::string> tokens) {
      // As HF: in the first token every replacement character is dropped (not only a leading one).
      for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = replace_all(*re, tokens[i], i == 0 && prepend ? "" : " ");
      return tokens;
    });
  } else {
    throw Error(path + ".type",
                "decoder '" + type +
                    "' is not supported (supported: ByteLevel, ByteFallback, Fuse, Strip, Replace, "
                    "Metaspace, Sequence)");
  }
}

std::string TokenDecoder::decode(std::vector<std::string> tokens) const {
  if (!present_) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const Step& step : steps_) tokens = step(std::move(tokens));
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

}  // namespace realign::tokenizer
