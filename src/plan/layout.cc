#include "plan/layout.h"

#include <cctype>

#include "core/check.h"
#include "core/error.h"

namespace realign {

Layout::Coord Layout::coord_of(int device) const {
  REALIGN_CHECK(contains(device)) << "device " << device << " not in " << to_string(*this);
  return coord_at(device - first_device);
}

int Layout::device_of(const Coord& c) const {
  REALIGN_CHECK(c.dp >= 0 && c.dp < dp && c.tp >= 0 && c.tp < tp && c.pp >= 0 && c.pp < pp);
  return device_at(c);
}

Layout parse_layout(const std::string& text, const std::string& path) {
  const std::string grammar =
      "a layout is written d<dp>t<tp>p<pp>[e<ep>][@<first device>], e.g. d2t2p1, d4t1p2@8 or d4t2p1e8 "
      "(ReaLHF's d2p1m2 also works: m is tensor parallel)";
  Layout layout;
  bool seen[256] = {false};
  size_t i = 0;
  const std::string body = text.substr(0, text.find('@'));
  if (body.empty()) throw Error(path, "empty layout; " + grammar);
  while (i < body.size()) {
    const unsigned char axis = static_cast<unsigned char>(body[i]);
    if (axis != 'd' && axis != 't' && axis != 'p' && axis != 'm' && axis != 'e')
      throw Error(path, "unexpected '" + std::string(1, char(axis)) + "' in '" + text + "'; " + grammar);
    const unsigned char key = axis == 'm' ? 't' : axis;
    if (seen[key]) throw Error(path, "axis given twice in '" + text + "'; " + grammar);
    seen[key] = true;
    size_t j = ++i;
    while (j < body.size() && std::isdigit(static_cast<unsigned char>(body[j]))) ++j;
    if (j == i || j - i > 5) throw Error(path, "expected a number after '" + std::string(1, char(axis)) + "' in '" + text + "'; " + grammar);
    const int value = std::stoi(body.substr(i, j - i));
    if (value <= 0) throw Error(path, "parallel degrees must be positive in '" + text + "'");
    (key == 'd' ? layout.dp : key == 't' ? layout.tp : key == 'e' ? layout.ep : layout.pp) = value;
    i = j;
  }
  const auto at = text.find('@');
  if (at != std::string::npos) {
    const std::string offset = text.substr(at + 1);
    if (offset.empty() || offset.size() > 6 || offset.find_first_not_of("0123456789") != std::string::npos)
      throw Error(path, "expected a device number after '@' in '" + text + "'; " + grammar);
    layout.first_device = std::stoi(offset);
  }
  return layout;
}

std::string to_string(const Layout& l) {
  std::string s = "d" + std::to_string(l.dp) + "t" + std::to_string(l.tp) + "p" + std::to_string(l.pp);
  if (l.ep != 1) s += "e" + std::to_string(l.ep);
  if (l.first_device != 0) s += "@" + std::to_string(l.first_device);
  return s;
}

}  // namespace realign
