// Pipelined generation samples what single-stage generation samples (multi-process, Gloo, fp32): the same
// tokens, lengths and log-probs at pp = 2 and 4, alone and with tp = 2 or dp = 2, greedy and with per-row
// seeds, for micro-batches more and fewer than the stages. The checks run inside
// pipeline_generate_test_worker on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/launcher.h"

namespace realign::runtime {
namespace {

// args: model, n_layers, layout, rows per micro-batch ("2,9"), flags ("tied").
void run_ranks(int nprocs, std::vector<std::string> args) {
  comm::LaunchOptions o;
  o.nprocs = nprocs;
  o.argv = {PIPELINE_GENERATE_TEST_WORKER};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.capture_output = true;
  o.forward_output = false;
  o.timeout = std::chrono::milliseconds(120'000);
  const comm::LaunchResult r = comm::launch_local(o);
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

// Nine prompts: five micro-batches of 2 rows (the last of 1), three of 4, or one of all 9.
TEST(PipelinedGeneration, TwoStagesEqualOneStage) { run_ranks(2, {"llama-tiny", "3", "d1t1p2", "2,4,9"}); }

// GPT-2 (learned positions, tied embedding on the first and last stage) over four stages: more and fewer
// micro-batches than stages.
TEST(PipelinedGeneration, FourStagesEqualOneStage) { run_ranks(4, {"gpt2-tiny", "4", "d1t1p4", "1,3"}); }

// tp = 2 inside each of two stages: the last stage's tp ranks sample the same tokens and each sends them to
// its own peers.
TEST(PipelinedGeneration, TensorTimesPipelineEqualsOneStage) {
  run_ranks(4, {"llama-tiny", "2", "d1t2p2", "2", "tied"});
}

// Two data-parallel replicas, each a two-stage pipeline over its share of the prompts (5 and 4 rows).
TEST(PipelinedGeneration, DataTimesPipelineEqualsOneStage) {
  run_ranks(4, {"llama-tiny", "4", "d2t1p2", "2"});
}

}  // namespace
}  // namespace realign::runtime
