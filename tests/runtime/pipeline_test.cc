// Pipeline parallelism computes what the single-stage model computes (multi-process, Gloo, fp32): pipelined
// inference outputs, 1F1B losses and accumulated gradients, tied-embedding gradients after the sync. The
// checks run inside pipeline_test_worker on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/launcher.h"

namespace realign::runtime {
namespace {

// args: model, n_layers, layout, micro-batch counts ("5,2"), flags ("tied", "value").
void run_ranks(int nprocs, std::vector<std::string> args) {
  comm::LaunchOptions o;
  o.nprocs = nprocs;
  o.argv = {PIPELINE_TEST_WORKER};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.capture_output = true;
  o.forward_output = false;
  o.timeout = std::chrono::milliseconds(120'000);
  const comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

TEST(Pipeline, LlamaTwoStages) { run_ranks(2, {"llama-tiny", "4", "d1t1p2", "3"}); }

// GPT-2 ties its embedding to the LM head: the first and the last of four stages hold it. Five micro-batches
// (more than stages), then two (fewer than the warm-up steps: the warm-up is cut to the micro-batches there
// are).
TEST(Pipeline, Gpt2FourStagesMoreAndFewerMicroBatchesThanStages) {
  run_ranks(4, {"gpt2-tiny", "4", "d1t1p4", "5,2"});
}

// tp = 2 inside each of two stages, a tied LLaMA: each tp rank talks to its own peer in the other stage.
TEST(Pipeline, TiedLlamaTensorTimesPipeline) { run_ranks(4, {"llama-tiny", "4", "d1t2p2", "3", "tied"}); }

// A critic (value head), layers split unevenly (1 + 2), two data-parallel replicas each with its pipeline.
TEST(Pipeline, CriticUnevenStagesWithDataParallel) {
  run_ranks(4, {"llama-tiny", "3", "d2t1p2", "3", "value"});
}

}  // namespace
}  // namespace realign::runtime
