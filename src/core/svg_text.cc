#include "core/svg_text.h"

#include <cstring>

namespace realign {

std::string svg_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

double text_width(const std::string& s, double font_size, bool bold) {
  // DejaVu Sans advances in em: i, l, j, punctuation and space 0.28-0.41; f, r, t 0.35-0.41; most lowercase
  // and digits 0.52-0.64; capitals 0.55-0.86; m, w, M, W and =, +, <, >, #, &, ^ 0.78-1.0. Bold is up to 12%
  // wider.
  double em = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte: counted with its lead byte
    if (c >= 0x80)
      em += 1.0;
    else if (std::strchr("mwMW@%=+<>~#&^", c))
      em += 1.0;
    else if (c >= 'A' && c <= 'Z')
      em += 0.8;
    else if (std::strchr("iljI.,:;'|!() []", c))
      em += 0.42;
    else if (std::strchr("frt-/", c))
      em += 0.45;
    else
      em += 0.65;
  }
  return em * font_size * (bold ? 1.12 : 1.0);
}

}  // namespace realign
