#include "core/utf8.h"

namespace realign {

std::optional<size_t> find_invalid_utf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    uint8_t c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0)
      len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
      len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
      len = 4, cp = c & 0x07, min = 0x10000;
    else
      return i;
    if (i + len > n) return i;
    for (int k = 1; k < len; ++k) {
      uint8_t cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::nullopt;
}

uint32_t next_code_point(std::string_view s, size_t& pos) {
  uint8_t c = static_cast<uint8_t>(s[pos]);
  if (c < 0x80) {
    ++pos;
    return c;
  }
  int len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
  uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[pos + k]) & 0x3f);
  pos += len;
  return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace realign
