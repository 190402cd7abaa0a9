#include "graph/length_distribution.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/check.h"
#include "core/read_file.h"
#include "graph/generation_run.h"

namespace realign {
namespace {

// Equal-mass midpoints (the body, and the mean) and then ever finer points towards 1 (the tail: the longest
// of 16,384 samples is near 1 - 2^-14).
std::vector<double> probability_grid() {
  constexpr int kBody = 256;
  std::vector<double> p;
  for (int i = 0; i < kBody; ++i) p.push_back((i + 0.5) / kBody);
  for (int j = 10; j <= 24; ++j) p.push_back(1.0 - std::ldexp(1.0, -j));
  return p;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[min(X, cap)] for X = exp(mu + sigma Z).
double capped_lognormal_mean(double mu, double sigma, double cap) {
  const double lc = std::log(cap);
  return std::exp(mu + sigma * sigma / 2) * normal_cdf((lc - mu - sigma * sigma) / sigma) +
         cap * (1.0 - normal_cdf((lc - mu) / sigma));
}

}  // namespace

double normal_quantile(double p) {
  REALIGN_CHECK(p > 0 && p < 1) << p;
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  };
  if (p < 0.02425) return tail(std::sqrt(-2 * std::log(p)));
  if (p > 1 - 0.02425) return -tail(std::sqrt(-2 * std::log(1 - p)));
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double LengthDistribution::quantile(double p) const {
  REALIGN_CHECK(!quantiles.empty());
  if (p <= quantiles.front().first) return quantiles.front().second;
  if (p >= quantiles.back().first) return quantiles.back().second;
  const auto hi = std::upper_bound(quantiles.begin(), quantiles.end(), std::make_pair(p, -1e300));
  const auto lo = hi - 1;
  const double w = (p - lo->first) / (hi->first - lo->first);
  return lo->second + w * (hi->second - lo->second);
}

double LengthDistribution::expected_max(int64_t n) const {
  if (n <= 1 || fixed()) return n <= 1 ? mean : quantiles.front().second;
  // E[max] = integral of Q(p) d(p^n), over the table's stretches (Q at each stretch's middle), in the tail
  // too: p^n rises there.
  const double N = double(n);
  double sum = 0, p0 = 0, f0 = 0;
  auto add_to = [&](double p1) {
    const double f1 = std::pow(p1, N);
    sum += quantile((p0 + p1) / 2) * (f1 - f0);
    p0 = p1;
    f0 = f1;
  };
  for (const auto& q : quantiles)
    if (q.first > p0) add_to(q.first);
  add_to(1.0);
  return sum;
}

bool LengthDistribution::operator==(const LengthDistribution& o) const {
  return quantiles == o.quantiles && cap == o.cap && mean == o.mean && source == o.source;
}

LengthDistribution fixed_lengths(int64_t length) {
  LengthDistribution d;
  d.quantiles = {{0.5, double(length)}};
  d.cap = length;
  d.mean = double(length);
  d.source = "fixed: every sample " + std::to_string(length) + " tokens";
  return d;
}

LengthDistribution lognormal_lengths(double mean, int64_t cap, double sigma, const std::string& path) {
  if (!(sigma > 0) || sigma > 4)
    throw Error(path, "the lognormal's sigma must be in (0, 4]; got " + std::to_string(sigma));
  if (!(mean > 0) || mean >= double(cap))
    throw Error(path, "a spread of lengths needs a mean below the cap; got mean " + std::to_string(mean) +
                          ", cap " + std::to_string(cap));
  // The capped mean rises with the location: bisect.
  double lo = std::log(mean) - 10 * sigma - 10, hi = std::log(double(cap)) + 10 * sigma;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (capped_lognormal_mean(mid, sigma, double(cap)) < mean ? lo : hi) = mid;
  }
  const double mu = (lo + hi) / 2;
  LengthDistribution d;
  for (double p : probability_grid())
    d.quantiles.push_back({p, std::min(double(cap), std::exp(mu + sigma * normal_quantile(p)))});
  d.cap = cap;
  d.mean = mean;
  char text[160];
  std::snprintf(text, sizeof text, "lognormal (sigma %.2f) fitted to mean %.0f and cap %lld", sigma, mean,
                static_cast<long long>(cap));
  d.source = text;
  return d;
}

LengthDistribution quantile_lengths(std::vector<std::pair<double, double>> points, int64_t cap,
                                    const std::string& path) {
  if (points.empty()) throw Error(path, "needs at least one [probability, length] pair");
  std::sort(points.begin(), points.end());
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& [p, len] = points[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!(p > 0 && p < 1)) throw Error(at, "a probability must be in (0, 1); got " + std::to_string(p));
    if (!(len >= 1) || len > double(cap))
      throw Error(at, "a length must be in [1, cap " + std::to_string(cap) + "]; got " + std::to_string(len));
    if (i > 0 && (p == points[i - 1].first || len < points[i - 1].second))
      throw Error(at, "lengths must rise with the probabilities, each probability once");
  }
  LengthDistribution d;
  d.quantiles.push_back({0.0, 1.0});
  d.quantiles.insert(d.quantiles.end(), points.begin(), points.end());
  d.quantiles.push_back({1.0, double(cap)});
  d.cap = cap;
  for (size_t i = 1; i < d.quantiles.size(); ++i)  // the mean of a piecewise-linear quantile function
    d.mean += (d.quantiles[i].first - d.quantiles[i - 1].first) *
              (d.quantiles[i].second + d.quantiles[i - 1].second) / 2;
  d.source = "quantiles given (" + std::to_string(points.size()) + " points, linear between)";
  return d;
}

LengthDistribution observed_lengths(std::vector<int64_t> lengths, int64_t cap, const std::string& source) {
  REALIGN_CHECK(!lengths.empty());
  for (int64_t& l : lengths) l = std::clamp<int64_t>(l, 0, cap);
  std::sort(lengths.begin(), lengths.end());
  const double n = double(lengths.size());
  LengthDistribution d;
  d.cap = cap;
  double sum = 0;
  for (int64_t l : lengths) sum += double(l);
  d.mean = sum / n;
  for (double p : probability_grid()) {
    // The empirical quantile; past the last sample's share, the longest observed.
    const double rank = std::min(p * n, n - 1);
    d.quantiles.push_back({p, double(lengths[size_t(rank)])});
  }
  d.source = source + " (" + std::to_string(lengths.size()) + " lengths observed)";
  return d;
}

std::vector<int64_t> read_length_file(const std::string& given, const std::string& path) {
  const std::string file = is_directory(given) ? given + "/metrics.jsonl" : given;
  std::ifstream in(file);
  if (!in) throw Error(path, "cannot read '" + file + "'");
  std::vector<int64_t> out;
  std::string line;
  int line_no = 0;
  auto take = [&](const Json& v, const std::string& where) {
    if (!v.is_number() || v.get<double>() < 0)
      throw Error(path, where + ": a length must be a non-negative number; got " + v.dump());
    out.push_back(int64_t(std::llround(v.get<double>())));
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file + ":" + std::to_string(line_no);
    const Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded()) throw Error(path, where + ": not JSON");
    if (j.is_object() && j.contains(kLengthCountsKey) && j[kLengthCountsKey].is_array()) {
      const Json& counts = j[kLengthCountsKey];
      for (size_t len = 0; len < counts.size(); ++len) {
        if (!counts[len].is_number_integer() || counts[len].get<int64_t>() < 0)
          throw Error(path, where + ": " + kLengthCountsKey + " holds counts; got " + counts[len].dump());
        out.insert(out.end(), size_t(counts[len].get<int64_t>()), int64_t(len));
      }
    } else if (j.is_object() && j.contains("lengths") && j["lengths"].is_array()) {
      for (const Json& v : j["lengths"]) take(v, where);
    } else if (j.is_object() && j.contains("length")) {
      take(j["length"], where);
    } else if (j.is_object() && is_directory(given)) {
      continue;  // a run's step without generation (an SFT step)
    } else {
      take(j, where);
    }
  }
  if (out.empty()) throw Error(path, "'" + file + "' holds no lengths");
  return out;
}

std::string to_string(Batching b) { return b == Batching::kStatic ? "static" : "continuous"; }

Json to_json(const LengthDistribution& d) {
  Json j;
  j["source"] = d.source;
  j["mean"] = d.mean;
  j["p50"] = d.quantile(0.5);
  j["p90"] = d.quantile(0.9);
  j["p99"] = d.quantile(0.99);
  j["cap"] = d.cap;
  return j;
}

}  // namespace realign
