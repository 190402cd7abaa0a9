#include "cost/decode_segments.h"

#include <algorithm>
#include <utility>

namespace realign {
namespace {

// E[L^k] over the equal-mass body of the table.
double moment(const LengthDistribution& d, int k) {
  constexpr int kPoints = 256;
  double sum = 0;
  for (int i = 0; i < kPoints; ++i) {
    const double l = d.quantile((i + 0.5) / kPoints);
    sum += k == 1 ? l : l * l;
  }
  return sum / kPoints;
}

}  // namespace

double running_length(const LengthDistribution& d) {
  if (d.fixed()) return d.mean;
  const double m1 = moment(d, 1);
  return m1 > 0 ? moment(d, 2) / m1 : 0.0;
}

double running_context(const LengthDistribution& d, double prompt_len) {
  return prompt_len + running_length(d) / 2.0;
}

namespace {

// Stretches ending at increasing lengths, each with its mean running batch, as segments.
std::vector<DecodeSegment> stretches(const std::vector<std::pair<double, double>>& end_and_batch,
                                     double prompt_len) {
  std::vector<DecodeSegment> out;
  double t = 0;
  for (const auto& [end, batch] : end_and_batch) {
    if (end > t && batch > 0) out.push_back({end - t, batch, prompt_len + (t + end) / 2, 1});
    t = std::max(t, end);
  }
  return out;
}

}  // namespace

std::vector<DecodeSegment> drain_segments(std::vector<double> lengths, double prompt_len) {
  std::sort(lengths.begin(), lengths.end());
  std::vector<std::pair<double, double>> ends;
  for (size_t i = 0; i < lengths.size(); ++i) ends.push_back({lengths[i], double(lengths.size() - i)});
  return stretches(ends, prompt_len);
}

std::vector<DecodeSegment> drain_segments(const LengthDistribution& d, double prompt_len, int64_t count,
                                          double top) {
  // Breakpoints by how many samples are longer (r): every one near the top, where the tail is, then ever
  // sparser; the sample with r longer ones has rank count - r, expected at Q((count - r) / (count + 1)).
  std::vector<int64_t> above = {0};
  for (int64_t r = 1; r < count; r = std::max(r + 1, r * 5 / 4)) above.push_back(r);
  if (count > 1 && above.back() != count - 1) above.push_back(count - 1);
  auto length_of = [&](int64_t r) {
    return r == 0 ? top : std::min(top, d.quantile(double(count - r) / double(count + 1)));
  };
  // Until the shortest sample ends, all of them run; between two breakpoints the running count falls from
  // r_next to r + 1 (its mean taken: exact where a step's cost is affine in the batch).
  std::vector<std::pair<double, double>> ends;
  for (size_t j = above.size(); j-- > 0;) {
    const int64_t r = above[j];
    const double batch = j + 1 == above.size() ? double(count) : (double(above[j + 1]) + double(r) + 1) / 2;
    ends.push_back({length_of(r), batch});
  }
  return stretches(ends, prompt_len);
}

double segments_time(const std::vector<DecodeSegment>& segments,
                     const std::function<double(double batch, double context)>& step_s) {
  double t = 0;
  for (const DecodeSegment& s : segments) t += s.steps * s.micro_batches * step_s(s.batch, s.context);
  return t;
}

std::vector<DecodeSegment> decode_segments(const GenerationRun& run, double prompt_len, double gen_len,
                                           int64_t replica_seqs, int64_t batch_seqs, int64_t micro_batches,
                                           int64_t micro_batch_seqs, bool pipelined) {
  const LengthDistribution& d = run.lengths;
  const double B = double(micro_batch_seqs), m = double(micro_batches);
  if (d.quantiles.empty() || d.fixed()) return {{gen_len, B, prompt_len + gen_len / 2.0, m}};
  const double top = d.expected_max(batch_seqs);
  const double tail_from = std::min(top, d.quantile(kTailFrom));
  std::vector<DecodeSegment> out;
  auto add = [&](DecodeSegment s) {
    if (s.steps > 0 && s.micro_batches > 0) out.push_back(s);
  };
  if (pipelined) {
    // realign's pipelined generation (runtime/pipeline_generate.cc): every micro-batch in flight until its
    // longest sample ends; the one holding the batch's longest goes on alone.
    const double wave = std::min(top, d.expected_max(micro_batch_seqs));
    const double last = std::max(wave, tail_from);
    add({wave, B, prompt_len + wave / 2.0, m});
    add({last - wave, B, prompt_len + (wave + last) / 2.0, 1});
    add({top - last, B, prompt_len + (last + top) / 2.0, 1, true});
    return out;
  }
  const double n = double(replica_seqs);
  if (run.partial_rollout) {
    // The batch kept full, with the samples of every batch in flight: the replica's tokens at its
    // concurrency, no tail waited for.
    const double c = std::min(n, B) * double(run.in_flight_batches);
    add({n * d.mean / c, c, running_context(d, prompt_len), 1});
    return out;
  }
  if (run.batching == Batching::kStatic) {
    // Waves one after another, each as long as its longest sample; the last holds the batch's longest.
    const double wave = std::min(top, d.expected_max(micro_batch_seqs));
    add({wave, B, prompt_len + wave / 2.0, m - 1});
    add({tail_from, B, prompt_len + tail_from / 2.0, 1});
    add({top - tail_from, B, prompt_len + (tail_from + top) / 2.0, 1, true});
    return out;
  }
  // Continuous: full while samples wait (samples finish at B / mean per step), then the last B drain.
  if (n > B) add({(n - B) * d.mean / B, B, running_context(d, prompt_len), 1});
  for (DecodeSegment s : drain_segments(d, prompt_len, int64_t(std::min(n, B)), top)) {
    s.tail = s.batch <= (1 - kTailFrom) * n;
    add(s);
  }
  return out;
}

}  // namespace realign
