// The 1F1B schedule as data: every micro-batch runs forward then backward once, in order; stage s holds at
// most min(S - s, M) micro-batches; all stages together cannot deadlock (blocking receives, asynchronous
// sends) and finish in (M + S - 1) * (t_forward + t_backward) when every step takes the same time per stage.
#include "runtime/detail/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace realign::runtime {
namespace {

using Kind = PipelineStep::Kind;

// Runs the stages' schedules against each other: F(m) on stage s waits for F(m) on s-1, B(m) on s waits for
// B(m) on s+1. Returns the makespan, or -1 when no stage can move before all are done (a deadlock).
double simulate(int n_stages, int n_micro, double t_forward, double t_backward) {
  std::vector<std::vector<PipelineStep>> steps;
  for (int s = 0; s < n_stages; ++s) steps.push_back(one_f_one_b_schedule(s, n_stages, n_micro));
  std::vector<std::vector<double>> f_done(size_t(n_stages), std::vector<double>(size_t(n_micro), -1));
  std::vector<std::vector<double>> b_done = f_done;
  std::vector<size_t> next(size_t(n_stages), 0);
  std::vector<double> clock(size_t(n_stages), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (int s = 0; s < n_stages; ++s) {
      if (next[size_t(s)] == steps[size_t(s)].size()) continue;
      const PipelineStep& st = steps[size_t(s)][next[size_t(s)]];
      const size_t m = size_t(st.micro);
      double ready = clock[size_t(s)];
      if (st.kind == Kind::kForward && s > 0) {
        if (f_done[size_t(s - 1)][m] < 0) continue;
        ready = std::max(ready, f_done[size_t(s - 1)][m]);
      }
      if (st.kind == Kind::kBackward && s + 1 < n_stages) {
        if (b_done[size_t(s + 1)][m] < 0) continue;
        ready = std::max(ready, b_done[size_t(s + 1)][m]);
      }
      clock[size_t(s)] = ready + (st.kind == Kind::kForward ? t_forward : t_backward);
      (st.kind == Kind::kForward ? f_done : b_done)[size_t(s)][m] = clock[size_t(s)];
      ++next[size_t(s)];
      moved = true;
    }
  }
  for (int s = 0; s < n_stages; ++s)
    if (next[size_t(s)] != steps[size_t(s)].size()) return -1;
  return *std::max_element(clock.begin(), clock.end());
}

TEST(PipelineSchedule, EachMicroBatchForwardThenBackwardOnceInOrder) {
  for (int S = 1; S <= 6; ++S)
    for (int M = 0; M <= 9; ++M)
      for (int s = 0; s < S; ++s) {
        const auto steps = one_f_one_b_schedule(s, S, M);
        ASSERT_EQ(steps.size(), size_t(2 * M));
        int f = 0, b = 0;
        for (const PipelineStep& st : steps) {
          if (st.kind == Kind::kForward) {
            EXPECT_EQ(st.micro, f++);
          } else {
            EXPECT_EQ(st.micro, b++);
            EXPECT_LT(st.micro, f) << "backward before forward";
          }
        }
        EXPECT_EQ(peak_in_flight(steps), std::min(S - s, M)) << "stage " << s << " of " << S << ", M " << M;
      }
}

TEST(PipelineSchedule, SecondOfFourStages) {
  using S = PipelineStep;
  // Stage 1 of 4: two warm-up forwards, then 1F1B, then two cool-down backwards.
  const std::vector<S> want = {{Kind::kForward, 0},  {Kind::kForward, 1}, {Kind::kForward, 2},
                               {Kind::kBackward, 0}, {Kind::kForward, 3}, {Kind::kBackward, 1},
                               {Kind::kBackward, 2}, {Kind::kBackward, 3}};
  EXPECT_EQ(one_f_one_b_schedule(1, 4, 4), want);
}

TEST(PipelineSchedule, NoDeadlockAndTheBubbleOfOneFOneB) {
  for (int S = 1; S <= 6; ++S)
    for (int M = 1; M <= 9; ++M)
      EXPECT_DOUBLE_EQ(simulate(S, M, 1.0, 2.0), (M + S - 1) * 3.0)
          << S << " stages, " << M << " micro-batches";
}

}  // namespace
}  // namespace realign::runtime
