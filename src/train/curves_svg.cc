#include "train/curves_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/axis_ticks.h"
#include "core/svg_text.h"

namespace realign::train {
namespace {

constexpr int kCols = 2;
constexpr double kPlotW = 400, kPlotH = 200, kFont = 11, kTitleFont = 13, kTop = 40, kMargin = 16;
constexpr double kAbove = 22;  // panel title above the plot
constexpr double kBelow = 40;  // x tick labels and the "step" caption below it
constexpr double kRightGap = 30;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

using Points = std::vector<std::pair<double, double>>;

double step_of(const Json& r, size_t index) {
  return r.contains("step") && r["step"].is_number() ? r["step"].get<double>() : double(index);
}

std::string stage_of(const Json& r) {
  return r.contains("stage") && r["stage"].is_string() ? r["stage"].get<std::string>() : "";
}

// The (step, value) points of `key`, of the records of `stage` only when it is not empty.
Points collect(const std::vector<Json>& records, const std::string& key, const std::string& stage) {
  Points s;
  for (size_t i = 0; i < records.size(); ++i) {
    const Json& r = records[i];
    if (!r.is_object() || !r.contains(key) || !r[key].is_number()) continue;
    if (!stage.empty() && stage_of(r) != stage) continue;
    const double y = r[key].get<double>();
    if (std::isfinite(y)) s.emplace_back(step_of(r, i), y);
  }
  return s;
}

// Each stage and its first step, in the order the run went through them.
std::vector<std::pair<std::string, double>> stage_starts(const std::vector<Json>& records) {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].is_object()) continue;
    const std::string s = stage_of(records[i]);
    if (!s.empty() && (out.empty() || out.back().first != s)) out.emplace_back(s, step_of(records[i], i));
  }
  return out;
}

// How a stage ("sft", "rm", "rl", "dpo") is named in a picture.
std::string stage_title(const std::string& stage) {
  if (stage == "sft") return "SFT";
  if (stage == "rl") return "RL";
  if (stage == "rm") return "reward model";
  if (stage == "dpo") return "DPO";
  return stage;
}

struct Shown {
  std::string title;
  Points points;
  AxisTicks x, y;
  std::vector<std::string> y_labels;
};

// One panel at (x0, y0), the plot's top left corner.
void draw_panel(std::string& svg, const Shown& p, const std::vector<std::pair<std::string, double>>& stages,
                double x0, double y0) {
  auto sx = [&](double x) { return x0 + (x - p.x.lo) / (p.x.hi - p.x.lo) * kPlotW; };
  auto sy = [&](double y) { return y0 + kPlotH - (y - p.y.lo) / (p.y.hi - p.y.lo) * kPlotH; };
  svg += "<text x=\"" + num(x0) + "\" y=\"" + num(y0 - 8) + "\" font-size=\"" + num(kTitleFont) + "\">" +
         svg_escape(p.title) + "</text>\n";
  for (size_t i = 0; i < p.y.values.size(); ++i) {
    const double y = sy(p.y.values[i]);
    svg += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x0 + kPlotW) + "\" y2=\"" +
           num(y) + "\" stroke=\"#e5e5e5\"/>\n<text x=\"" + num(x0 - 5) + "\" y=\"" + num(y + 4) +
           "\" text-anchor=\"end\">" + p.y_labels[i] + "</text>\n";
  }
  const std::vector<std::string> x_labels = tick_labels(p.x);
  for (size_t i = 0; i < p.x.values.size(); ++i) {
    const double x = sx(p.x.values[i]);
    svg += "<line x1=\"" + num(x) + "\" y1=\"" + num(y0 + kPlotH) + "\" x2=\"" + num(x) + "\" y2=\"" +
           num(y0 + kPlotH + 4) + "\" stroke=\"#666\"/>\n<text x=\"" + num(x) + "\" y=\"" +
           num(y0 + kPlotH + 15) + "\" text-anchor=\"middle\">" + x_labels[i] + "</text>\n";
  }
  svg += "<text x=\"" + num(x0 + kPlotW / 2) + "\" y=\"" + num(y0 + kPlotH + 30) +
         "\" text-anchor=\"middle\" fill=\"#555\">step</text>\n";
  for (size_t k = 1; k < stages.size(); ++k) {
    const double at = stages[k].second;
    if (at <= p.x.lo || at > p.x.hi) continue;
    svg += "<line x1=\"" + num(sx(at)) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(sx(at)) + "\" y2=\"" +
           num(y0 + kPlotH) + "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
    // The stage's name just right of its line, or left of it near the right edge.
    const std::string name = stage_title(stages[k].first);
    const bool room = sx(at) + 3 + text_width(name, 10) <= x0 + kPlotW;
    svg += "<text x=\"" + num(room ? sx(at) + 3 : sx(at) - 3) + "\" y=\"" + num(y0 + 11) +
           "\" font-size=\"10\" fill=\"#555\"" + (room ? "" : " text-anchor=\"end\"") + ">" +
           svg_escape(name) + "</text>\n";
  }
  svg += "<rect x=\"" + num(x0) + "\" y=\"" + num(y0) + "\" width=\"" + num(kPlotW) + "\" height=\"" +
         num(kPlotH) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  std::string path;
  for (size_t i = 0; i < p.points.size(); ++i)
    path += (i == 0 ? "M" : " L") + num(sx(p.points[i].first)) + " " + num(sy(p.points[i].second));
  svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\"/>\n";
  if (p.points.size() == 1)
    svg += "<circle cx=\"" + num(sx(p.points[0].first)) + "\" cy=\"" + num(sy(p.points[0].second)) +
           "\" r=\"3\" fill=\"#1f77b4\"/>\n";
}

}  // namespace

std::string curves_svg(const std::vector<Json>& records, const std::vector<CurvePanel>& panels,
                       const std::string& title) {
  const auto stages = stage_starts(records);
  std::vector<Shown> shown;
  auto add = [&](const std::string& panel_title, Points points) {
    if (points.empty()) return;
    Shown s{panel_title, std::move(points), {}, {}, {}};
    double xmin = s.points.front().first, xmax = xmin, ymin = s.points.front().second, ymax = ymin;
    for (auto [x, y] : s.points)
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    s.x = axis_ticks(xmin, xmax, 6, false, 1);
    s.y = axis_ticks(ymin, ymax, 5, true);
    s.y_labels = tick_labels(s.y);
    shown.push_back(std::move(s));
  };
  for (const CurvePanel& p : panels) {
    if (!p.by_stage || stages.empty()) {
      add(p.title, collect(records, p.key, ""));
      continue;
    }
    std::vector<std::string> seen;  // a stage once, even if the run came back to it
    for (const auto& st : stages)
      if (std::find(seen.begin(), seen.end(), st.first) == seen.end()) {
        seen.push_back(st.first);
        add(p.title + ", " + stage_title(st.first) + " steps", collect(records, p.key, st.first));
      }
  }
  // One gutter for every panel, as wide as the widest y label, so the columns line up.
  double gutter = 30;
  for (const Shown& s : shown)
    for (const std::string& l : s.y_labels) gutter = std::max(gutter, text_width(l, kFont) + 10);
  const double cell_w = gutter + kPlotW + kRightGap, cell_h = kAbove + kPlotH + kBelow;
  const int rows = std::max(1, int((shown.size() + kCols - 1) / kCols));
  const double width = kMargin + kCols * cell_w, height = kTop + rows * cell_h + 10;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" +
                    num(height) + "\" font-family=\"sans-serif\" font-size=\"" + num(kFont) + "\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + num(kMargin + gutter) + "\" y=\"24\" font-size=\"16\">" + svg_escape(title) +
         "</text>\n";
  if (shown.empty()) svg += "<text x=\"" + num(kMargin + gutter) + "\" y=\"70\">no metrics recorded</text>\n";
  for (size_t k = 0; k < shown.size(); ++k)
    draw_panel(svg, shown[k], stages, kMargin + int(k % kCols) * cell_w + gutter,
               kTop + int(k / kCols) * cell_h + kAbove);
  svg += "</svg>\n";
  return svg;
}

}  // namespace realign::train
