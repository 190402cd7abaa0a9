// Tensor and pipeline parallel parity over real local processes (Gloo): see parity_worker.cc for what each
// rank checks against the whole model.
#include <gtest/gtest.h>

#include "comm/launcher.h"

namespace realign::model {
namespace {

void launch_worker(int nprocs, std::vector<std::string> argv) {
  comm::LaunchOptions o;
  o.nprocs = nprocs;
  o.argv = std::move(argv);
  o.capture_output = true;
  o.forward_output = false;
  o.timeout = std::chrono::milliseconds(120000);
  comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

void run_layout(int tp, int pp, int ep = 1) {
  launch_worker(tp * pp, {MODEL_PARITY_WORKER, std::to_string(tp), std::to_string(pp), std::to_string(ep)});
}

void generate_with_ep(int dp, int tp, int ep) {
  launch_worker(dp * tp,
                {MODEL_EP_GENERATE_WORKER, std::to_string(dp), std::to_string(tp), std::to_string(ep)});
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
// Generation with ep groups that span data-parallel ranks holding different prompts, which finish at
// different steps: a finished rank keeps stepping with its ep group, and every rank's tokens are the whole
// model's (ep_generate_worker.cc).
TEST(EpGeneration, D4Ep2EqualsTheWholeModel) { generate_with_ep(4, 1, 2); }
TEST(EpGeneration, D2Tp2Ep4EqualsTheWholeModel) { generate_with_ep(2, 2, 4); }

}  // namespace
}  // namespace realign::model
