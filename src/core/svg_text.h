// Text in the SVG pictures realign draws: escaping, and how wide a label will render, so layouts can keep
// legends and tick labels inside the picture.
#pragma once

#include <string>

namespace realign {

// `s` with &, <, > and " escaped for SVG text and attribute values.
std::string svg_escape(const std::string& s);

// An upper estimate of the width in pixels of `s` (UTF-8, as written before escaping) at `font_size` in a
// sans-serif font: DejaVu Sans's advance widths (what renderers fall back to on Linux), rounded up per class
// of character; Helvetica and Arial are narrower.
double text_width(const std::string& s, double font_size, bool bold = false);

}  // namespace realign
