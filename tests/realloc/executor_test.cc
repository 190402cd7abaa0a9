// Reallocation and data redistribution on real ranks (4 and 8 local processes over Gloo), many random layout
// pairs per launch; the worker (realloc_test_worker.cc) checks every shard and sample.
#include <gtest/gtest.h>

#include "comm/launcher.h"

namespace realign {
namespace {

comm::LaunchResult launch(int nprocs, std::vector<std::string> args) {
  comm::LaunchOptions o;
  o.nprocs = nprocs;
  o.argv = {REALLOC_TEST_WORKER};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.capture_output = true;
  o.forward_output = false;
  o.timeout = std::chrono::milliseconds(240'000);
  return comm::launch_local(o);
}

TEST(ReallocExecutor, RandomPairsLlamaOnFourRanks) {
  auto r = launch(4, {"pairs", "llama-tiny", "30", "1", "fp32"});
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

TEST(ReallocExecutor, RandomPairsGpt2UnevenVocabBf16OnFourRanks) {
  auto r = launch(4, {"pairs", "gpt2-odd", "30", "2", "bf16"});
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

TEST(ReallocExecutor, RandomPairsOnEightRanks) {
  auto r = launch(8, {"pairs", "gpt2-tiny", "12", "3", "fp32"});
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
  r = launch(8, {"pairs", "llama-tiny", "12", "4", "bf16"});
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

// Mixture of experts: source and destination layouts with random ep (whole experts per ep rank) and tp (each
// expert's inner dimension cut); bit-exact shards, bytes moved equal to the minimum.
TEST(ReallocExecutor, RandomPairsDifferingInEpOnFourRanks) {
  auto r = launch(4, {"pairs", "moe-odd", "30", "6", "bf16"});
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

TEST(DataRedistribution, RandomLayoutsVariableLengthsOnFourRanks) {
  auto r = launch(4, {"data", "40", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.failure << "\n" << r.output_text();
}

}  // namespace
}  // namespace realign
