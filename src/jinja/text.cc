#include "jinja/text.h"

#include <unicode/uchar.h>

#include <cctype>

#include "core/utf8.h"

namespace realign::jinja {

namespace {

bool is_uspace(uint32_t cp) { return u_isUWhiteSpace(UChar32(cp)) || cp == 0xFEFF; }

}  // namespace

std::string trim(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left)
    while (b < e) {
      size_t p = b;
      if (!is_uspace(next_code_point(s, p))) break;
      b = p;
    }
  if (right)
    while (e > b) {
      size_t start = e - 1;
      while (start > b && (uint8_t(s[start]) & 0xC0) == 0x80) --start;
      size_t p = start;
      if (!is_uspace(next_code_point(s, p))) break;
      e = start;
    }
  return s.substr(b, e - b);
}

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t p = 0; p < s.size();) out.push_back(next_code_point(s, p));
  return out;
}
std::string from_code_points(const std::vector<uint32_t>& cps, size_t b, size_t e) {
  std::string out;
  for (size_t k = b; k < e; ++k) append_utf8(out, cps[k]);
  return out;
}

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) c = upper ? char(std::toupper(uint8_t(c))) : char(std::tolower(uint8_t(c)));
  return s;
}

std::string replace_str(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t pos = 0;
  for (int64_t n = 0; count < 0 || n < count; ++n) {
    size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out += s.substr(pos, hit - pos) + to;
    pos = hit + from.size();
  }
  return out + s.substr(pos);
}

std::string title(const std::string& s, bool every_word) {
  std::string out = every_word ? s : ascii_case(s, false);
  bool start = true;
  for (char& c : out) {
    if (start && std::isalpha(uint8_t(c)))
      c = char(std::toupper(uint8_t(c)));
    else if (every_word && std::isalpha(uint8_t(c)))
      c = char(std::tolower(uint8_t(c)));
    start = every_word ? !std::isalpha(uint8_t(c)) : false;
  }
  if (!every_word && !s.empty()) out = std::string(1, char(std::toupper(uint8_t(s[0])))) + s.substr(1);
  return out;
}

}  // namespace realign::jinja
