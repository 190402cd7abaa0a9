// For tests of the SVG pictures: every <text> label's box (core/svg_text.h's upper estimate of its width,
// placed by its x and text-anchor; its font size high) against the picture's width and against each other.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/svg_text.h"

namespace realign::testing {

// The value of attribute `name` in the tag `tag` ("" when absent).
inline std::string svg_attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

struct LabelBox {
  std::string text;
  double left = 0, right = 0, baseline = 0, size = 0;
  std::string describe() const {
    return "\"" + text + "\" [" + std::to_string(left) + ", " + std::to_string(right) + "] at y " +
           std::to_string(baseline);
  }
};

inline std::vector<LabelBox> label_boxes(const std::string& svg) {
  std::vector<LabelBox> out;
  const std::string root = svg.substr(0, svg.find('>'));
  const std::string root_size = svg_attribute(root, "font-size");
  for (size_t at = svg.find("<text "); at != std::string::npos; at = svg.find("<text ", at + 1)) {
    const size_t open_end = svg.find('>', at), close = svg.find("</text>", open_end);
    const std::string tag = svg.substr(at, open_end - at);
    LabelBox b;
    for (size_t i = open_end + 1; i < close; ++i) {  // entities (&lt;) count as one wide character
      const bool entity = svg[i] == '&';
      if (entity) i = svg.find(';', i);
      b.text += entity ? '&' : svg[i];
    }
    const std::string size = svg_attribute(tag, "font-size");
    b.size = std::stod(size.empty() ? root_size : size);
    const double w = text_width(b.text, b.size, svg_attribute(tag, "font-weight") == "bold");
    const double x = std::stod(svg_attribute(tag, "x"));
    const std::string anchor = svg_attribute(tag, "text-anchor");
    b.left = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
    b.right = b.left + w;
    b.baseline = std::stod(svg_attribute(tag, "y"));
    out.push_back(b);
  }
  return out;
}

// The labels that reach past x = 0 or the <svg> element's width.
inline std::vector<std::string> labels_outside(const std::string& svg) {
  const double width = std::stod(svg_attribute(svg.substr(0, svg.find('>')), "width"));
  std::vector<std::string> out;
  for (const LabelBox& b : label_boxes(svg))
    if (b.left < 0 || b.right > width) out.push_back(b.describe() + " of " + std::to_string(width));
  return out;
}

// The pairs of labels that overlap: on lines closer than the larger font size, their boxes meeting.
inline std::vector<std::string> overlapping_labels(const std::string& svg) {
  const std::vector<LabelBox> boxes = label_boxes(svg);
  std::vector<std::string> out;
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      const LabelBox &a = boxes[i], &b = boxes[j];
      if (std::fabs(a.baseline - b.baseline) < std::max(a.size, b.size) && a.left < b.right &&
          b.left < a.right)
        out.push_back(a.describe() + " and " + b.describe());
    }
  return out;
}

}  // namespace realign::testing
