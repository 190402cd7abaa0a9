#include "tokenizer/pre_tokenizer.h"

#include <array>
#include <memory>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/pcre2_regex.h"
#include "tokenizer/tokenizer_json_util.h"

namespace realign::tokenizer {

const char* const kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// Printable Latin-1 bytes map to themselves, the rest to U+0100 upwards, so every byte has a visible,
// non-space character.
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

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(const nlohmann::json& j, const std::string& path) {
  const std::string b = j.value("behavior", std::string("Isolated"));
  if (b == "Removed") return Behavior::kRemoved;
  if (b == "Isolated") return Behavior::kIsolated;
  if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (b == "Contiguous") return Behavior::kContiguous;
  throw Error(path + ".behavior",
              "'" + b +
                  "' is not a split behaviour (valid: Removed, Isolated, MergedWithPrevious, "
                  "MergedWithNext, Contiguous)");
}

struct Span {
  size_t b, e;
  bool is_match;
};

// HF's NormalizedString::split: the matches and the gaps between them, combined by `behavior`.
std::vector<PreToken> split_by(const Pcre2Regex& re, Behavior behavior, bool invert, const PreToken& in) {
  const std::string& text = in.text;
  std::vector<Span> spans;
  size_t cursor = 0;
  for (auto [b, e] : re.find_all(text)) {
    if (b > cursor) spans.push_back({cursor, b, false});
    spans.push_back({b, e, true});
    cursor = e;
  }
  if (cursor < text.size()) spans.push_back({cursor, text.size(), false});
  if (invert)
    for (Span& s : spans) s.is_match = !s.is_match;
  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kRemoved:
      for (const Span& s : spans)
        if (!s.is_match) out.push_back(s);
      break;
    case Behavior::kIsolated:
      out = spans;
      break;
    case Behavior::kMergedWithPrevious:
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !out.empty())
          out.back().e = s.e;
        else
          out.push_back(s);
        previous_match = s.is_match;
      }
      break;
    case Behavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty())
          out.back().b = it->b;
        else
          out.push_back(*it);
        previous_match = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
    case Behavior::kContiguous:
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !out.empty())
          out.back().e = s.e;
        else
          out.push_back(s);
        previous_match = s.is_match;
      }
      break;
  }
  std::vector<PreToken> pieces;
  for (const Span& s : out)
    if (s.e > s.b) pieces.push_back({text.substr(s.b, s.e - s.b), in.at_start && s.b == 0});
  return pieces;
}

}  // namespace

const std::string& byte_level_char(uint8_t byte) { return byte_tables().byte_char[byte]; }

int byte_level_byte(uint32_t code_point) {
  return code_point < byte_tables().char_byte.size() ? byte_tables().char_byte[code_point] : -1;
}

PreTokenizer::PreTokenizer(const nlohmann::json& j, const std::string& path) {
  if (!j.is_null()) add(j, path);
}

PreTokenizer PreTokenizer::gpt2() {
  return PreTokenizer({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}},
                      "gpt2 pattern");
}

void PreTokenizer::add(const nlohmann::json& j, const std::string& path) {
  const std::string type = json_piece_type(j, path);
  if (type == "Sequence") {
    for_each_json_item(j, "pretokenizers", path,
                       [this](const nlohmann::json& q, const std::string& qp) { add(q, qp); });
  } else if (type == "Split") {
    std::shared_ptr<Pcre2Regex> re = json_pattern(j.value("pattern", nlohmann::json()), path + ".pattern");
    const Behavior behavior = parse_behavior(j, path);
    const bool invert = json_bool_or(j, "invert", false);
    steps_.push_back(
        [re, behavior, invert](const PreToken& p) { return split_by(*re, behavior, invert, p); });
  } else if (type == "Digits") {
    std::shared_ptr<Pcre2Regex> re = std::make_shared<Pcre2Regex>("[0-9]", path);
    const Behavior behavior =
        json_bool_or(j, "individual_digits", false) ? Behavior::kIsolated : Behavior::kContiguous;
    steps_.push_back([re, behavior](const PreToken& p) { return split_by(*re, behavior, false, p); });
  } else if (type == "Whitespace" || type == "WhitespaceSplit") {
    const bool words = type == "Whitespace";  // \w+|[^\w\s]+ kept; WhitespaceSplit: runs of \s removed
    std::shared_ptr<Pcre2Regex> re = std::make_shared<Pcre2Regex>(words ? R"(\w+|[^\w\s]+)" : R"(\s+)", path);
    steps_.push_back([re, words](const PreToken& p) { return split_by(*re, Behavior::kRemoved, words, p); });
  } else if (type == "ByteLevel") {
    byte_level_ = true;
    const bool prefix_space = json_bool_or(j, "add_prefix_space", false);
    std::shared_ptr<Pcre2Regex> re;
    if (json_bool_or(j, "use_regex", true)) re = std::make_shared<Pcre2Regex>(kGpt2SplitPattern, path);
    steps_.push_back([prefix_space, re](const PreToken& p) {
      PreToken q = p;
      if (prefix_space && q.text.rfind(' ', 0) != 0) q.text = " " + q.text;
      std::vector<PreToken> pieces =
          re ? split_by(*re, Behavior::kIsolated, false, q) : std::vector<PreToken>{q};
      for (PreToken& piece : pieces) {
        std::string mapped;
        for (char c : piece.text) mapped += byte_level_char(static_cast<uint8_t>(c));
        piece.text = std::move(mapped);
      }
      return pieces;
    });
  } else if (type == "Metaspace") {
    const std::string replacement = json_required_string(j, "replacement", path);
    if (replacement.empty()) throw Error(path + ".replacement", "must be one character");
    // prepend_scheme (tokenizers >= 0.14) or the older add_prefix_space flag.
    std::string scheme = json_bool_or(j, "add_prefix_space", true) ? "always" : "never";
    if (j.contains("prepend_scheme") && j["prepend_scheme"].is_string())
      scheme = j["prepend_scheme"].get<std::string>();
    if (scheme != "always" && scheme != "first" && scheme != "never")
      throw Error(path + ".prepend_scheme", "'" + scheme + "' is not valid (valid: always, first, never)");
    const bool split = json_bool_or(j, "split", true);
    std::shared_ptr<Pcre2Regex> space = std::make_shared<Pcre2Regex>(" ", path);
    std::shared_ptr<Pcre2Regex> rep =
        std::make_shared<Pcre2Regex>("\\Q" + replacement + "\\E", path + ".replacement");
    steps_.push_back([=](const PreToken& p) {
      PreToken q{replace_all(*space, p.text, replacement), p.at_start};
      const bool prepend = scheme == "always" || (scheme == "first" && p.at_start);
      if (prepend && q.text.rfind(replacement, 0) != 0) q.text = replacement + q.text;
      if (!split) return std::vector<PreToken>{q};
      return split_by(*rep, Behavior::kMergedWithNext, false, q);
    });
  } else {
    throw Error(path + ".type",
                "pre-tokenizer '" + type +
                    "' is not supported (supported: Split, ByteLevel, Metaspace, Digits, Whitespace, "
                    "WhitespaceSplit, Sequence)");
  }
}

std::vector<PreToken> PreTokenizer::apply(PreToken text) const {
  std::vector<PreToken> pieces;
  if (!text.text.empty()) pieces.push_back(std::move(text));
  for (const Step& step : steps_) {
    std::vector<PreToken> next;
    for (const PreToken& p : pieces)
      for (PreToken& q : step(p)) next.push_back(std::move(q));
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace realign::tokenizer
