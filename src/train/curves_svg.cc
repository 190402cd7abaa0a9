#include "train/curves_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace realign::runtime {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

struct Series {
  std::vector<std::pair<double, double>> points;
};

Series collect(const std::vector<Json>& records, const std::string& key) {
  Series s;
  for (size_t i = 0; i < records.size(); ++i) {
    const Json& r = records[i];
    if (!r.is_object() || !r.contains(key) || !r[key].is_number()) continue;
    double y = r[key].get<double>();
    if (!std::isfinite(y)) continue;
    double x = r.contains("step") && r["step"].is_number() ? r["step"].get<double>() : double(i);
    s.points.emplace_back(x, y);
  }
  return s;
}

}  // namespace

std::string curves_svg(const std::vector<Json>& records, const std::vector<CurvePanel>& panels,
                       const std::string& title) {
  std::vector<std::pair<CurvePanel, Series>> shown;
  for (const CurvePanel& p : panels) {
    Series s = collect(records, p.key);
    if (!s.points.empty()) shown.emplace_back(p, std::move(s));
  }
  const int cols = 2, pw = 420, ph = 220, pad = 50, top = 40;
  int rows = std::max<int>(1, int((shown.size() + cols - 1) / cols));
  int width = cols * (pw + pad) + pad, height = top + rows * (ph + pad) + 10;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + std::to_string(pad) + "\" y=\"24\" font-size=\"16\">" + escape(title) + "</text>\n";
  if (shown.empty()) svg += "<text x=\"50\" y=\"70\">no metrics recorded</text>\n";
  for (size_t k = 0; k < shown.size(); ++k) {
    const auto& [panel, series] = shown[k];
    int x0 = pad + int(k % cols) * (pw + pad), y0 = top + int(k / cols) * (ph + pad) + 20;
    double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
    for (auto [x, y] : series.points) {
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
    if (xmax == xmin) xmax = xmin + 1;
    if (ymax == ymin) ymax = ymin + (ymin == 0 ? 1 : std::fabs(ymin) * 0.1);
    auto sx = [&](double x) { return x0 + (x - xmin) / (xmax - xmin) * pw; };
    auto sy = [&](double y) { return y0 + ph - (y - ymin) / (ymax - ymin) * ph; };
    svg += "<text x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(y0 - 6) + "\" font-size=\"13\">" +
           escape(panel.title) + "</text>\n";
    svg += "<rect x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(y0) + "\" width=\"" +
           std::to_string(pw) + "\" height=\"" + std::to_string(ph) + "\" fill=\"none\" stroke=\"#999\"/>\n";
    svg += "<text x=\"" + std::to_string(x0 - 4) + "\" y=\"" + std::to_string(y0 + 10) +
           "\" text-anchor=\"end\">" + num(ymax) + "</text>\n";
    svg += "<text x=\"" + std::to_string(x0 - 4) + "\" y=\"" + std::to_string(y0 + ph) +
           "\" text-anchor=\"end\">" + num(ymin) + "</text>\n";
    svg += "<text x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(y0 + ph + 14) + "\">" + num(xmin) +
           "</text>\n";
    svg += "<text x=\"" + std::to_string(x0 + pw) + "\" y=\"" + std::to_string(y0 + ph + 14) +
           "\" text-anchor=\"end\">step " + num(xmax) + "</text>\n";
    std::string path;
    for (size_t i = 0; i < series.points.size(); ++i) {
      path +=
          (i == 0 ? "M" : " L") + num(sx(series.points[i].first)) + " " + num(sy(series.points[i].second));
    }
    svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\"/>\n";
    if (series.points.size() == 1)
      svg += "<circle cx=\"" + num(sx(series.points[0].first)) + "\" cy=\"" +
             num(sy(series.points[0].second)) + "\" r=\"3\" fill=\"#1f77b4\"/>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace realign::runtime
