#include "tokenizer/text_normalizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <memory>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/tokenizer_json_util.h"

namespace realign::tokenizer {

namespace {

icu::UnicodeString to_icu(const std::string& s) {
  return icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
}

// HF's Strip normaliser: White_Space code points off either end.
std::string strip_space(const std::string& text, bool left, bool right) {
  std::vector<std::pair<size_t, uint32_t>> cps;  // (start offset, code point)
  for (size_t pos = 0; pos < text.size();) {
    size_t start = pos;
    cps.emplace_back(start, next_code_point(text, pos));
  }
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && u_isUWhiteSpace(static_cast<UChar32>(cps[b].second))) ++b;
  if (right)
    while (e > b && u_isUWhiteSpace(static_cast<UChar32>(cps[e - 1].second))) --e;
  size_t from = b < cps.size() ? cps[b].first : text.size();
  size_t to = e < cps.size() ? cps[e].first : text.size();
  return text.substr(from, to - from);
}

}  // namespace

std::string unicode_normalize(const std::string& text, const std::string& form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = form == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                              : form == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                              : form == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                                               : icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status)) throw Error("tokenizer", "ICU " + form + " normaliser is unavailable");
  icu::UnicodeString out = n->normalize(to_icu(text), status);
  if (U_FAILURE(status)) throw Error("tokenizer", form + " normalisation failed");
  std::string s;
  out.toUTF8String(s);
  return s;
}

TextNormalizer::TextNormalizer(const nlohmann::json& j, const std::string& path) {
  if (!j.is_null()) add(j, path);
}

void TextNormalizer::add(const nlohmann::json& j, const std::string& path) {
  const std::string type = json_piece_type(j, path);
  if (type == "Sequence") {
    for_each_json_item(j, "normalizers", path,
                       [this](const nlohmann::json& q, const std::string& qp) { add(q, qp); });
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    steps_.push_back([type](std::string s) { return unicode_normalize(s, type); });
  } else if (type == "Replace") {
    std::shared_ptr<Pcre2Regex> re = json_pattern(j.value("pattern", nlohmann::json()), path + ".pattern");
    const std::string content = json_required_string(j, "content", path);
    steps_.push_back([re, content](std::string s) { return replace_all(*re, s, content); });
  } else if (type == "Prepend") {
    const std::string prefix = json_required_string(j, "prepend", path);
    steps_.push_back([prefix](std::string s) { return s.empty() ? s : prefix + s; });
  } else if (type == "Strip") {
    const bool left = json_bool_or(j, "strip_left", true), right = json_bool_or(j, "strip_right", true);
    steps_.push_back([left, right](std::string s) { return strip_space(s, left, right); });
  } else if (type == "Lowercase") {
    steps_.push_back([](std::string s) {
      std::string out;
      to_icu(s).toLower(icu::Locale::getRoot()).toUTF8String(out);
      return out;
    });
  } else {
    throw Error(path + ".type",
                "normalizer '" + type +
                    "' is not supported (supported: NFC, NFD, NFKC, NFKD, Replace, Prepend, Strip, "
                    "Lowercase, Sequence)");
  }
}

std::string TextNormalizer::apply(std::string text) const {
  for (const auto& step : steps_) text = step(std::move(text));
  return text;
}

}  // namespace realign::tokenizer
