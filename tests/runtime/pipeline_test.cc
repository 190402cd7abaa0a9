// Pipeline parallelism computes what the single-stage model computes (multi-process, Gloo, fp32): pipelined
// inference outputs, 1F1B losses and accumulated gradients, tied-embedding gradients after the sync; and
// pipelined generation samples what single-stage generation samples: the same tokens, lengths and log-probs
// at pp = 2 and 4, alone and with tp = 2 or dp = 2, greedy and with per-row seeds, for micro-batches more and
// fewer than the stages. The checks run inside pipeline_test_worker on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/launcher.h"

namespace realign::runtime {
namespace {

// args: model, n_layers, layout, micro-batch counts ("5,2") or, with "generate", rows per micro-batch; flags
// ("tied", "value", "generate").
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

// Nine prompts: five micro-batches of 2 rows (the last of 1), three of 4, or one of all 9.
TEST(PipelinedGeneration, TwoStagesEqualOneStage) {
  run_ranks(2, {"llama-tiny", "3", "d1t1p2", "2,4,9", "generate"});
}

// GPT-2 (learned positions, tied embedding on the first and last stage) over four stages: more and fewer
// micro-batches than stages.
TEST(PipelinedGeneration, FourStagesEqualOneStage) {
  run_ranks(4, {"gpt2-tiny", "4", "d1t1p4", "1,3", "generate"});
}

// tp = 2 inside each of two stages: the last stage's tp ranks sample the same tokens and each sends them to
// its own peers.
TEST(PipelinedGeneration, TensorTimesPipelineEqualsOneStage) {
  run_ranks(4, {"llama-tiny", "2", "d1t2p2", "2", "tied", "generate"});
}

// Two data-parallel replicas, each a two-stage pipeline over its share of the prompts (5 and 4 rows).
TEST(PipelinedGeneration, DataTimesPipelineEqualsOneStage) {
  run_ranks(4, {"llama-tiny", "4", "d2t1p2", "2", "generate"});
}

// Four stages with tp = 2 in each, and two four-stage replicas: eight ranks.
TEST(PipelinedGeneration, TensorTimesFourStagesEqualsOneStage) {
  run_ranks(8, {"llama-tiny", "4", "d1t2p4", "2", "generate"});
}

TEST(PipelinedGeneration, DataTimesFourStagesEqualsOneStage) {
  run_ranks(8, {"llama-tiny", "4", "d2t1p4", "3", "generate"});
}

}  // namespace
}  // namespace realign::runtime
