#include "cost/timeline_svg.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "core/axis_ticks.h"
#include "core/svg_text.h"
#include "core/units.h"

namespace realign {
namespace {

constexpr double kPlot = 900, kRight = 50, kRow = 18, kTop = 30, kAxis = 34, kFont = 11, kLegendRow = 18;
const char* const kHostColour = "#bbbbbb";

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Colours in order of first appearance (Tableau 10); the iteration's own host work is grey.
struct Palette {
  std::map<std::string, std::string> colour;
  std::vector<std::string> order;
  const std::string& of(const std::string& name, const std::string& kind) {
    static const char* tab10[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    auto it = colour.find(name);
    if (it != colour.end()) return it->second;
    order.push_back(name);
    if (kind == "host") return colour[name] = kHostColour;
    size_t calls = 0;
    for (const auto& [n, c] : colour) calls += c != kHostColour;
    return colour[name] = tab10[calls % 10];
  }
};

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

// Where the plot starts: after the widest device label.
double left_of(const std::vector<std::pair<const Timeline*, std::string>>& parts) {
  int devices = 1;
  for (const auto& p : parts) devices = std::max(devices, p.first->n_devices);
  return std::max(70.0, text_width("device " + std::to_string(devices - 1), kFont) + 12);
}

// Draws one timeline's rows starting at y0; returns the height used.
double draw(std::string& svg, const Timeline& t, double left, double y0, double span, Palette& pal,
            const std::string& label) {
  const double scale = kPlot / (span > 0 ? span : 1.0);
  if (!label.empty())
    svg += "<text x=\"" + num(left) + "\" y=\"" + num(y0 - 6) + "\" font-weight=\"bold\">" +
           svg_escape(label) + "</text>\n";
  for (int d = 0; d < t.n_devices; ++d) {
    const double y = y0 + d * kRow;
    svg += "<text x=\"" + num(left - 6) + "\" y=\"" + num(y + kRow * 0.7) + "\" text-anchor=\"end\">device " +
           std::to_string(d) + "</text>\n";
    svg += "<line x1=\"" + num(left) + "\" y1=\"" + num(y + kRow) + "\" x2=\"" + num(left + kPlot) +
           "\" y2=\"" + num(y + kRow) + "\" stroke=\"#eee\"/>\n";
  }
  const bool iterations = several_iterations(t);
  for (const auto& e : t.events) {
    const std::string& colour = pal.of(e.name, e.kind);
    const double x = left + e.start_s * scale, w = std::max(0.5, (e.end_s - e.start_s) * scale);
    const double y = y0 + e.first_device * kRow + 2, h = e.n_devices * kRow - 4;
    std::string style = "fill=\"" + colour + "\"";
    if (e.kind == "realloc" || e.kind == "load") style = "fill=\"" + colour + "\" fill-opacity=\"0.45\"";
    if (e.kind == "data") style = "fill=\"" + colour + "\" fill-opacity=\"0.7\"";
    svg += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
           "\" " + style + " stroke=\"#333\" stroke-width=\"0.5\"><title>" + svg_escape(e.name) + " " + e.kind +
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

// The time axis: 1-2-5 ticks over [0, span], labelled in one unit (s, ms or us): the last tick's.
void axis(std::string& svg, double left, double y, double span) {
  const double scale = kPlot / (span > 0 ? span : 1.0);
  const AxisTicks t = axis_ticks(0, span > 0 ? span : 1.0, 8, false);
  const double end = t.values.back(), unit = end >= 1 ? 1 : end >= 1e-3 ? 1e3 : 1e6;
  const char* unit_name = unit == 1 ? " s" : unit == 1e3 ? " ms" : " us";
  AxisTicks in_unit = t;
  in_unit.step *= unit;
  for (double& v : in_unit.values) v *= unit;
  const std::vector<std::string> labels = tick_labels(in_unit);
  svg += "<line x1=\"" + num(left) + "\" y1=\"" + num(y) + "\" x2=\"" + num(left + kPlot) + "\" y2=\"" +
         num(y) + "\" stroke=\"#333\"/>\n";
  for (size_t i = 0; i < t.values.size(); ++i) {
    const double x = left + t.values[i] * scale;
    svg += "<line x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y + 4) +
           "\" stroke=\"#333\"/>\n<text x=\"" + num(x) + "\" y=\"" + num(y + 16) +
           "\" text-anchor=\"middle\">" + labels[i] + unit_name + "</text>\n";
  }
}

// The legend: a swatch per call (and the host's own work), then how kinds are drawn, wrapped into rows that
// stay within the plot's width. Returns the height used.
double legend(std::string& svg, const Palette& pal, double left, double y0, bool iterations) {
  double x = left, y = y0;
  auto place = [&](double w) {
    if (x > left && x + w > left + kPlot) x = left, y += kLegendRow;
    const double at = x;
    x += w + 18;
    return at;
  };
  for (const auto& name : pal.order) {
    const double at = place(16 + text_width(name, kFont));
    svg += "<rect x=\"" + num(at) + "\" y=\"" + num(y) + "\" width=\"12\" height=\"12\" fill=\"" +
           pal.colour.at(name) + "\"/><text x=\"" + num(at + 16) + "\" y=\"" + num(y + 10) + "\">" +
           svg_escape(name) + "</text>\n";
  }
  const std::string kinds = std::string("(solid: call, light: data move or host load, hatched: reallocation") +
                            (iterations ? ", number: iteration)" : ")");
  const double at = place(text_width(kinds, kFont));  // before reading y, which a new row moves
  svg += "<text x=\"" + num(at) + "\" y=\"" + num(y + 10) + "\">" + kinds + "</text>\n";
  return y + kLegendRow - y0;
}

std::string render(const std::vector<std::pair<const Timeline*, std::string>>& parts,
                   const std::string& title) {
  double span = 0;
  for (const auto& p : parts) span = std::max(span, span_of(*p.first));
  const double left = left_of(parts);
  Palette pal;
  std::string body;
  double y = kTop + (title.empty() ? 0 : 10);
  for (const auto& p : parts) {
    y += p.second.empty() ? 0 : 14;
    y += draw(body, *p.first, left, y, span, pal, p.second) + 4;
    axis(body, left, y, span);
    y += kAxis;
  }
  bool iterations = false;
  for (const auto& p : parts) iterations = iterations || several_iterations(*p.first);
  y += legend(body, pal, left, y, iterations) + 6;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(left + kPlot + kRight) +
                    "\" height=\"" + num(y) + "\" font-family=\"sans-serif\" font-size=\"" + num(kFont) +
                    "\">\n";
  svg +=
      "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#333\" "
      "stroke-width=\"1\"/></pattern></defs>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!title.empty())
    svg += "<text x=\"" + num(left) + "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" +
           svg_escape(title) + "</text>\n";
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
