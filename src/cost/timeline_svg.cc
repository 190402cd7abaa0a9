#include "cost/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "core/units.h"

namespace realign {
namespace {

constexpr double kLeft = 70, kRight = 20, kWidth = 900, kRow = 18, kTop = 30, kAxis = 30;

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Colours in order of first appearance (Tableau 10).
struct Palette {
  std::map<std::string, std::string> colour;
  std::vector<std::string> order;
  const std::string& of(const std::string& name) {
    static const char* tab10[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    auto it = colour.find(name);
    if (it != colour.end()) return it->second;
    order.push_back(name);
    return colour[name] = tab10[(order.size() - 1) % 10];
  }
};

// A "nice" tick step (1, 2 or 5 x 10^k) giving about 8 ticks.
double tick_step(double span) {
  if (span <= 0) return 1;
  const double raw = span / 8.0, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

double span_of(const Timeline& t) {
  double end = 0;
  for (const auto& e : t.events) end = std::max(end, e.end_s);
  return end;
}

// Whether a timeline holds several iterations (the steady state of overlapping ones, staleness > 0).
bool several_iterations(const Timeline& t) {
  for (const auto& e : t.events)
    if (e.iteration != t.events.front().iteration) return true;
  return false;
}

// Draws one timeline's rows starting at y0; returns the height used.
double draw(std::string& svg, const Timeline& t, double y0, double span, Palette& pal,
            const std::string& label) {
  const double scale = kWidth / (span > 0 ? span : 1.0);
  if (!label.empty())
    svg += "<text x=\"" + num(kLeft) + "\" y=\"" + num(y0 - 6) + "\" font-weight=\"bold\">" + escape(label) +
           "</text>\n";
  for (int d = 0; d < t.n_devices; ++d) {
    const double y = y0 + d * kRow;
    svg += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(y + kRow * 0.7) +
           "\" text-anchor=\"end\">device " + std::to_string(d) + "</text>\n";
    svg += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(y + kRow) + "\" x2=\"" + num(kLeft + kWidth) +
           "\" y2=\"" + num(y + kRow) + "\" stroke=\"#eee\"/>\n";
  }
  const bool iterations = several_iterations(t);
  for (const auto& e : t.events) {
    const std::string& colour = pal.of(e.name);
    const double x = kLeft + e.start_s * scale, w = std::max(0.5, (e.end_s - e.start_s) * scale);
    const double y = y0 + e.first_device * kRow + 2, h = e.n_devices * kRow - 4;
    std::string style = "fill=\"" + colour + "\"";
    if (e.kind == "realloc" || e.kind == "load") style = "fill=\"" + colour + "\" fill-opacity=\"0.45\"";
    if (e.kind == "data") style = "fill=\"" + colour + "\" fill-opacity=\"0.7\"";
    if (e.kind == "host") style = "fill=\"#bbbbbb\"";
    svg += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
           "\" " + style + " stroke=\"#333\" stroke-width=\"0.5\"><title>" + escape(e.name) + " " + e.kind +
           (iterations ? " (iteration " + std::to_string(e.iteration) + ")" : std::string()) + " " +
           format_seconds(e.start_s) + " - " + format_seconds(e.end_s) +
           (e.bytes > 0 ? ", " + format_bytes(e.bytes) : std::string()) + "</title></rect>\n";
    // Overlapping iterations: each call bar says which iteration it belongs to.
    if (iterations && e.kind == "call" && w >= 10)
      svg += "<text x=\"" + num(x + 2) + "\" y=\"" + num(y + std::min(h, kRow) * 0.5 + 4) +
             "\" font-size=\"9\" fill=\"white\">" + std::to_string(e.iteration) + "</text>\n";
    if (e.kind == "realloc")
      svg += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
             "\" fill=\"url(#hatch)\"/>\n";
  }
  return t.n_devices * kRow;
}

void axis(std::string& svg, double y, double span) {
  const double scale = kWidth / (span > 0 ? span : 1.0), step = tick_step(span);
  svg += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(y) + "\" x2=\"" + num(kLeft + kWidth) + "\" y2=\"" +
         num(y) + "\" stroke=\"#333\"/>\n";
  for (double v = 0; v <= span * (1 + 1e-9); v += step) {
    const double x = kLeft + v * scale;
    svg += "<line x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y + 4) +
           "\" stroke=\"#333\"/>\n<text x=\"" + num(x) + "\" y=\"" + num(y + 16) +
           "\" text-anchor=\"middle\">" + format_seconds(v) + "</text>\n";
  }
}

std::string render(const std::vector<std::pair<const Timeline*, std::string>>& parts,
                   const std::string& title) {
  double span = 0;
  for (const auto& p : parts) span = std::max(span, span_of(*p.first));
  Palette pal;
  std::string body;
  double y = kTop + (title.empty() ? 0 : 10);
  for (const auto& p : parts) {
    y += p.second.empty() ? 0 : 14;
    y += draw(body, *p.first, y, span, pal, p.second) + 4;
    axis(body, y, span);
    y += kAxis;
  }
  // Legend: calls, then kinds.
  double x = kLeft;
  for (const auto& name : pal.order) {
    body += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"12\" height=\"12\" fill=\"" +
            pal.colour[name] + "\"/><text x=\"" + num(x + 16) + "\" y=\"" + num(y + 10) + "\">" +
            escape(name) + "</text>\n";
    x += 30 + 7.0 * double(name.size());
  }
  bool iterations = false;
  for (const auto& p : parts) iterations = iterations || several_iterations(*p.first);
  body += "<text x=\"" + num(x) + "\" y=\"" + num(y + 10) +
          "\">(solid: call, light: data move, hatched: reallocation" +
          (iterations ? ", number: iteration" : "") + ")</text>\n";
  y += 24;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kLeft + kWidth + kRight) +
                    "\" height=\"" + num(y) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg +=
      "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#333\" "
      "stroke-width=\"1\"/></pattern></defs>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!title.empty())
    svg += "<text x=\"" + num(kLeft) + "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + escape(title) +
           "</text>\n";
  return svg + body + "</svg>\n";
}

}  // namespace

std::string timeline_svg(const Timeline& timeline, const std::string& title) {
  return render({{&timeline, ""}}, title);
}

std::string timeline_comparison_svg(const Timeline& estimated, const Timeline& measured,
                                    const std::string& title) {
  return render({{&estimated, "estimated"}, {&measured, "measured"}}, title);
}

}  // namespace realign
