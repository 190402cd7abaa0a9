// Generation's decoding as stretches of steps at one batch size: how the long tail of response lengths
// turns into time. Static batching runs each batch to its longest sample; continuous batching keeps its
// batch full from a queue, then drains, the batch shrinking as samples finish; partial rollouts keep it
// full throughout (the tail is interrupted, not waited for). Pure: call_cost.cc prices each segment with
// the decode-step model.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/generation_run.h"

namespace realign {

// `steps` decoding steps in which each of `micro_batches` micro-batches (pipelined: all in flight; else
// waves one after another) decodes `batch` sequences at mean context `context` (prompt + generated).
struct DecodeSegment {
  double steps = 0;
  double batch = 0;
  double context = 0;
  double micro_batches = 1;
  // After 90% of the replica's samples have ended (the tail: what asynchrony with partial rollouts hides).
  bool tail = false;
};

// The share of a replica's samples after whose end decoding is the tail.
constexpr double kTailFrom = 0.9;

// One generation replica (a dp rank) decoding `replica_seqs` of the call's `batch_seqs` samples in
// `micro_batches` micro-batches of `micro_batch_seqs` (pipelined: all in flight at once). The replica priced
// is the slowest: it holds the batch's longest sample (a synchronous step waits for it). Fixed lengths give
// one segment, the whole batch for every step (today's estimate exactly).
// `gen_len` is the call's mean length, which fixed lengths (or none given) take.
std::vector<DecodeSegment> decode_segments(const GenerationRun& run, double prompt_len, double gen_len,
                                           int64_t replica_seqs,
                                           int64_t batch_seqs, int64_t micro_batches,
                                           int64_t micro_batch_seqs, bool pipelined);

// The sorted lengths of `count` samples of `lengths` whose longest is `top`, as the segments of a batch that
// starts with all of them and shrinks as they finish (micro_batches 1). Grouped geometrically from the top,
// at most ~2 log2(count) segments.
std::vector<DecodeSegment> drain_segments(const LengthDistribution& lengths, double prompt_len, int64_t count,
                                          double top);

// The segments of one batch of samples of these lengths decoding together from the same start, the batch
// shrinking as they finish: the hand-computable case (lengths {1, 9}: 1 step of 2, then 8 steps of 1).
std::vector<DecodeSegment> drain_segments(std::vector<double> lengths, double prompt_len);

// The time of decoding the segments where one micro-batch's step of `batch` sequences at `context` takes
// step_s(batch, context) (waves; a pipeline's steps are priced by call_cost.cc).
double segments_time(const std::vector<DecodeSegment>& segments,
                     const std::function<double(double batch, double context)>& step_s);

// The mean context of a sample still decoding when a full batch runs in steady state: the prompt and half
// the length-biased mean length (E[L^2] / 2E[L]; L / 2 where lengths are fixed).
double running_context(const LengthDistribution& lengths, double prompt_len);

// The length-biased mean of the lengths, E[L^2] / E[L]: the mean final length of the samples a running
// batch holds (what their KV cache grows to).
double running_length(const LengthDistribution& lengths);

}  // namespace realign
