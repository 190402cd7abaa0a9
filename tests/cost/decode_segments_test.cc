#include "cost/decode_segments.h"

#include <gtest/gtest.h>

#include "cost/call_cost.h"
#include "cost/fixtures.h"

namespace realign {
namespace {

using testing::assign;
using testing::make_cluster;
using testing::make_graph;

double total_steps(const std::vector<DecodeSegment>& segments) {
  double steps = 0;
  for (const DecodeSegment& s : segments) steps += s.steps * s.micro_batches;
  return steps;
}

double sample_steps(const std::vector<DecodeSegment>& segments) {
  double tokens = 0;
  for (const DecodeSegment& s : segments) tokens += s.steps * s.micro_batches * s.batch;
  return tokens;
}

// Two replicas, lengths {1, 9} and {5, 5}, a step costing a + b per sequence: the first takes 1 step of 2
// sequences and 8 of 1 (9a + 10b), the second 5 of 2 (5a + 10b); a synchronous step waits for the first.
TEST(DecodeSegments, ASynchronousStepIsItsSlowerReplica) {
  const double a = 3.0, b = 0.5;
  auto step = [&](double batch, double) { return a + b * batch; };
  const auto first = drain_segments({9, 1}, 0), second = drain_segments({5, 5}, 0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].steps, 1);
  EXPECT_EQ(first[0].batch, 2);
  EXPECT_EQ(first[1].steps, 8);
  EXPECT_EQ(first[1].batch, 1);
  EXPECT_DOUBLE_EQ(first[1].context, 5.0);  // positions 1..9: the mean of the stretch from 1 to 9
  ASSERT_EQ(second.size(), 1u);
  EXPECT_DOUBLE_EQ(segments_time(first, step), 9 * a + 10 * b);
  EXPECT_DOUBLE_EQ(segments_time(second, step), 5 * a + 10 * b);
}

// One replica of 4 samples drawn from lengths {1, 5, 5, 9} at concurrency 4. Synchronously (continuous
// batching) the batch shrinks as they finish: 1 step of 4, 4 of 3 (the two 5s end), then the longest alone
// until the expected longest of the 4 draws (7.7: 9 with probability 1 - (3/4)^4). With partial rollouts the
// batch stays full (a new sample takes a finished one's place, an unfinished one resumes in the next step):
// the 20 tokens at 4 a step, 5 steps, the tail hidden.
TEST(DecodeSegments, PartialRolloutsKeepTheBatchFullWhereSynchronousDrains) {
  GenerationRun run{observed_lengths({1, 5, 5, 9}, 9, "test"), Batching::kContinuous, false};
  const double top = run.lengths.expected_max(4);
  EXPECT_NEAR(top, 9 * (1 - 0.31640625) + 5 * (0.31640625 - 0.00390625) + 0.00390625, 0.05);
  const auto sync = decode_segments(run, 0, 5, 4, 4, 1, 4, false);
  ASSERT_EQ(sync.size(), 3u);
  EXPECT_DOUBLE_EQ(sync[0].steps, 1);
  EXPECT_DOUBLE_EQ(sync[0].batch, 4);
  EXPECT_DOUBLE_EQ(sync[1].steps, 4);
  EXPECT_DOUBLE_EQ(sync[1].batch, 3);
  EXPECT_DOUBLE_EQ(sync[2].steps, top - 5);
  EXPECT_DOUBLE_EQ(sync[2].batch, 1);
  run.partial_rollout = true;
  const auto streaming = decode_segments(run, 0, 5, 4, 4, 1, 4, false);
  ASSERT_EQ(streaming.size(), 1u);
  EXPECT_DOUBLE_EQ(streaming[0].steps, 5);
  EXPECT_DOUBLE_EQ(streaming[0].batch, 4);
  // Static batching (realign's runtime) runs all 4 rows until the longest sample ends.
  run = GenerationRun{run.lengths, Batching::kStatic, false};
  const auto padded = decode_segments(run, 0, 5, 4, 4, 1, 4, false);
  EXPECT_DOUBLE_EQ(total_steps(padded), top);
  EXPECT_DOUBLE_EQ(sample_steps(padded), 4 * top);
}

// Streaming with two batches in flight (staleness 2: the engine runs two iterations ahead): the replica's
// running batch holds both batches' samples, 8 at once, so one batch's 20 tokens take 2.5 steps at 8, not
// 5 at 4; the KV cache holds the 8 (memory_model.cc).
TEST(DecodeSegments, BatchesInFlightShareTheReplicasRunningBatch) {
  GenerationRun run{observed_lengths({1, 5, 5, 9}, 9, "test"), Batching::kContinuous, true, 2};
  const auto streaming = decode_segments(run, 0, 5, 4, 4, 1, 4, false);
  ASSERT_EQ(streaming.size(), 1u);
  EXPECT_DOUBLE_EQ(streaming[0].steps, 2.5);
  EXPECT_DOUBLE_EQ(streaming[0].batch, 8);
  run.partial_rollout = false;  // in flight only where generation streams
  EXPECT_DOUBLE_EQ(total_steps(decode_segments(run, 0, 5, 4, 4, 1, 4, false)), run.lengths.expected_max(4));
}

// Continuous batching with a queue: 8 samples of lengths {2, 2, 2, 2, 6, 6, 6, 6} (mean 4) at concurrency 4
// keep the batch full for (8 - 4) x 4 / 4 = 4 steps (samples end at 4 / mean a step), then the last 4 drain.
TEST(DecodeSegments, AQueueKeepsTheBatchFullUntilItEmpties) {
  GenerationRun run{observed_lengths({2, 2, 2, 2, 6, 6, 6, 6}, 6, "test"), Batching::kContinuous, false};
  const auto s = decode_segments(run, 10, 4, 8, 8, 2, 4, false);
  ASSERT_FALSE(s.empty());
  EXPECT_DOUBLE_EQ(s[0].steps, 4);
  EXPECT_DOUBLE_EQ(s[0].batch, 4);
  // The steady batch's samples are at half their length-biased mean: E[L^2]/2E[L] = (4 + 36) / 2 / 4 / 2.
  EXPECT_DOUBLE_EQ(s[0].context, 10 + 40.0 / 2 / 8);
  // The last 4 (two of 2, two of 6 at the quantiles) drain to the batch's expected longest (5.98, the
  // longest of 8 draws): 2 steps of 4, then 2 running.
  const double top = run.lengths.expected_max(8);
  EXPECT_NEAR(sample_steps(s), 4 * 4 + 2 * 4 + (top - 2) * 2, 1e-9);
}

HardwareProfile h100() { return default_profile(builtin_device("h100-sxm", "device")); }

// The generation call of `graph` under `a`, its lengths replaced.
CallEstimate generation_estimate(DataflowGraph g, const MfcAssignment& a, const GenerationRun& run) {
  const int gen = g.mfc_index("actor_gen");
  g.mfcs[size_t(gen)].generation = run;
  return estimate_call(g, make_cluster(1, 8), h100(), gen, a);
}

// Fixed lengths are today's workload: every mode prices them as before, to the bit.
TEST(DecodeSegments, FixedLengthsGiveTheFixedLengthEstimateExactly) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 512, 512);
  for (const MfcAssignment& a : {assign("actor_gen", 0, 2, 4, 1, 1), assign("actor_gen", 0, 2, 2, 2, 4),
                                 assign("actor_gen", 0, 8, 1, 1, 4)}) {
    const CallEstimate none = generation_estimate(g, a, GenerationRun{});
    for (Batching b : {Batching::kStatic, Batching::kContinuous})
      for (bool partial : {false, true}) {
        const CallEstimate e = generation_estimate(g, a, GenerationRun{fixed_lengths(512), b, partial});
        EXPECT_EQ(e.time_s, none.time_s) << to_string(b) << " " << partial;
        EXPECT_EQ(e.bubble_fraction, none.bubble_fraction);
      }
  }
}

// At the same mean, a heavier tail never makes synchronous generation faster, whatever the batching.
TEST(DecodeSegments, AHeavierTailNeverSpeedsUpSynchronousGeneration) {
  const DataflowGraph g = make_graph("grpo", "qwen2.5-7b", 64, 512, 2048);
  for (const MfcAssignment& a : {assign("actor_gen", 0, 8, 1, 1, 1), assign("actor_gen", 0, 4, 2, 1, 4),
                                 assign("actor_gen", 0, 2, 2, 2, 2)})
    for (Batching b : {Batching::kStatic, Batching::kContinuous}) {
      double previous = generation_estimate(g, a, GenerationRun{fixed_lengths(2048), b, false}).time_s;
      for (double sigma : {0.25, 0.5, 1.0, 1.5, 2.0}) {
        const GenerationRun run{lognormal_lengths(2048, 16384, sigma, "s"), b, false};
        const double t = generation_estimate(g, a, run).time_s;
        EXPECT_GE(t, previous * (1 - 1e-9)) << to_string(b) << " sigma " << sigma << " " << to_string(a.strategy);
        previous = t;
      }
    }
}

// With partial rollouts the tail is not waited for: generation costs what the mean length does at a full
// batch, less than waiting for the tail.
TEST(DecodeSegments, PartialRolloutsPriceTheMeanNotTheTail) {
  const DataflowGraph g = make_graph("grpo", "qwen2.5-7b", 64, 512, 2048);
  const MfcAssignment a = assign("actor_gen", 0, 8, 1, 1, 1);
  const LengthDistribution tail = lognormal_lengths(2048, 16384, 1.0, "s");
  const double sync = generation_estimate(g, a, GenerationRun{tail, Batching::kContinuous, false}).time_s;
  const double streaming = generation_estimate(g, a, GenerationRun{tail, Batching::kContinuous, true}).time_s;
  const double fixed = generation_estimate(g, a, GenerationRun{fixed_lengths(2048), Batching::kContinuous,
                                                               false}).time_s;
  EXPECT_LT(streaming, 0.8 * sync);
  // The same tokens at the same batch; only the KV cache read per step (longer contexts) differs.
  EXPECT_NEAR(streaming / fixed, 1.0, 0.15);
}

}  // namespace
}  // namespace realign
