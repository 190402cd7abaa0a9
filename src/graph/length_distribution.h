// The distribution of generated (response) lengths under a cap: what generation is priced with, since a
// synchronous step waits for its longest sample. A quantile table: lengths at increasing probabilities, read
// by linear interpolation, exact in the tail where the max of many samples lies.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"

namespace realign {

struct LengthDistribution {
  // (probability, length) pairs, both non-decreasing; probabilities in (0, 1). One point: every sample has
  // that length (the fixed-length workload).
  std::vector<std::pair<double, double>> quantiles;
  int64_t cap = 0;     // no sample is longer (the engine's max_new_tokens / max_response_length)
  double mean = 0;     // the mean length (batch.gen_len for the lognormal family; computed otherwise)
  std::string source;  // what it was made from, for the report ("lognormal sigma 1.0 fitted to mean and cap")

  bool fixed() const { return quantiles.size() <= 1; }
  // The length below which a share p of the samples ends (p clamped to the table's range).
  double quantile(double p) const;
  // The expected longest of n samples drawn from it: the integral of Q(p) d(p^n).
  double expected_max(int64_t n) const;
  bool operator==(const LengthDistribution& o) const;
};

// The lognormal family's log-scale deviation when only the mean and the cap are known. Source: math
// reasoning outputs fit a lognormal (PolyTrace); a reasoning-RL run's lengths have median ~500 and p99 ~5,000
// tokens (jiahuanglin.xyz, rl_lessons 22b "Long-tail rollouts"), i.e. sigma = ln(10) / 2.326 = 0.99.
constexpr double kDefaultLengthSigma = 1.0;

// Every sample `length` tokens long.
LengthDistribution fixed_lengths(int64_t length);

// Lengths min(X, cap) with X lognormal of log-scale deviation `sigma`, its location chosen so that the mean
// of the capped lengths is `mean` (samples longer than the cap are cut at it, as engines cut them). Throws
// Error at `path` when no location gives that mean (mean >= cap).
LengthDistribution lognormal_lengths(double mean, int64_t cap, double sigma, const std::string& path);

// Linear between the given (probability, length) points, the cap at probability 1. `path` names the field.
LengthDistribution quantile_lengths(std::vector<std::pair<double, double>> points, int64_t cap,
                                    const std::string& path);

// The empirical distribution of observed lengths (each clamped to the cap).
LengthDistribution observed_lengths(std::vector<int64_t> lengths, int64_t cap, const std::string& source);

// A realign run whose response-length cap is at most kMaxCountedLength records its responses in each RL
// step's metrics.jsonl record under kLengthCountsKey: how many had each length 0..cap.
constexpr int64_t kMaxCountedLength = 256;
constexpr const char* kLengthCountsKey = "response/length_counts";

// Observed lengths from a file: a JSONL whose lines are numbers, or objects with "length" (a number),
// "lengths" (a list) or kLengthCountsKey (counts by length); a directory means its metrics.jsonl (a realign
// run's). Throws Error naming `path` (the config field) and the file.
std::vector<int64_t> read_length_file(const std::string& file, const std::string& path);

// The standard normal's inverse CDF (Acklam's rational approximation, relative error < 1.2e-9).
double normal_quantile(double p);

Json to_json(const LengthDistribution& d);

}  // namespace realign
