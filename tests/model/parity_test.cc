// Tensor and pipeline parallel parity over real local processes (Gloo): see parity_worker.cc for what each
// rank checks against the whole model.
#include <gtest/gtest.h>

#include "comm/launcher.h"

namespace realign::model {
namespace {

void run_layout(int tp, int pp, int ep = 1) {
  comm::LaunchOptions o;
  o.nprocs = tp * pp;
  o.argv = {MODEL_PARITY_WORKER, std::to_string(tp), std::to_string(pp), std::to_string(ep)};
  o.capture_output = true;
  o.forward_output = false;
  o.timeout = std::chrono::milliseconds(120000);
  comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

TEST(Parity, Tp2) { run_layout(2, 1); }
TEST(Parity, Tp4) { run_layout(4, 1); }
TEST(Parity, Pp2) { run_layout(1, 2); }
TEST(Parity, Tp2Pp2) { run_layout(2, 2); }
// Expert parallelism inside a tp group (the mixture-of-experts models only): each rank holds whole experts,
// routes its share of the tokens and exchanges them by all-to-all; forward, every gradient slice and
// generation equal the whole model's.
TEST(Parity, Tp2Ep2) { run_layout(2, 1, 2); }
TEST(Parity, Tp4Ep2) { run_layout(4, 1, 2); }
TEST(Parity, Tp4Ep4) { run_layout(4, 1, 4); }
TEST(Parity, Tp2Pp2Ep2) { run_layout(2, 2, 2); }

}  // namespace
}  // namespace realign::model
