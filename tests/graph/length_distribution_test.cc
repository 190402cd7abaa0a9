#include "graph/length_distribution.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "graph/algorithms.h"

namespace realign {
namespace {

// The mean over the table's equal-mass body.
double table_mean(const LengthDistribution& d) {
  double sum = 0;
  for (int i = 0; i < 4096; ++i) sum += d.quantile((i + 0.5) / 4096);
  return sum / 4096;
}

TEST(LengthDistribution, NormalQuantileMatchesTables) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(normal_quantile(0.01), -2.326348, 1e-6);
  EXPECT_NEAR(normal_quantile(1 - 1e-6), 4.753424, 1e-5);
}

TEST(LengthDistribution, FixedLengthsAreOneLength) {
  const LengthDistribution d = fixed_lengths(512);
  EXPECT_TRUE(d.fixed());
  EXPECT_EQ(d.quantile(0.01), 512);
  EXPECT_EQ(d.quantile(0.999), 512);
  EXPECT_EQ(d.expected_max(4096), 512);
  EXPECT_EQ(d.mean, 512);
}

// Fitted to mean and cap: the capped lengths' mean is the one asked for, nothing exceeds the cap, and the
// tail reaches the cap where the lognormal's mass above it is cut there.
TEST(LengthDistribution, LognormalIsFittedToMeanAndCap) {
  for (double sigma : {0.3, 1.0, 2.0}) {
    const LengthDistribution d = lognormal_lengths(2000, 8192, sigma, "batch");
    EXPECT_NEAR(table_mean(d), 2000, 2000 * 0.01) << sigma;
    EXPECT_LE(d.quantile(0.9999999), 8192);
    EXPECT_LT(d.quantile(0.5), 2000);  // a right-skewed distribution: median below the mean
    for (size_t i = 1; i < d.quantiles.size(); ++i) EXPECT_GE(d.quantiles[i].second, d.quantiles[i - 1].second);
  }
  EXPECT_EQ(lognormal_lengths(2000, 8192, 2.0, "b").quantile(0.9999), 8192);
  // The longest of more samples is longer, and never past the cap.
  const LengthDistribution d = lognormal_lengths(2000, 32768, 1.0, "b");
  EXPECT_LT(d.expected_max(8), d.expected_max(512));
  EXPECT_LT(d.expected_max(512), d.expected_max(16384));
  EXPECT_LE(d.expected_max(16384), 32768);
  EXPECT_THROW(lognormal_lengths(8192, 8192, 1.0, "b"), Error);
  EXPECT_THROW(lognormal_lengths(100, 8192, 0.0, "b"), Error);
}

// The expected longest of n draws: for {1, 5, 5, 9} observed, the longest of 2 is 9 with probability
// 1 - (3/4)^2, 5 with (3/4)^2 - (1/4)^2 and 1 with (1/4)^2.
TEST(LengthDistribution, ExpectedMaxOfObservedLengths) {
  const LengthDistribution d = observed_lengths({9, 5, 1, 5}, 16, "test");
  EXPECT_DOUBLE_EQ(d.mean, 5.0);
  EXPECT_NEAR(d.expected_max(2), 9 * (1 - 0.5625) + 5 * (0.5625 - 0.0625) + 1 * 0.0625, 0.05);
  EXPECT_EQ(d.quantile(0.999), 9);
}

TEST(LengthDistribution, QuantilesAreLinearBetweenThePoints) {
  const LengthDistribution d = quantile_lengths({{0.5, 100}, {0.9, 500}}, 1000, "q");
  EXPECT_DOUBLE_EQ(d.quantile(0.7), 300);
  EXPECT_DOUBLE_EQ(d.quantile(0.95), 750);  // towards the cap at 1
  // Trapezoids: 0.5 x (1 + 100) / 2 + 0.4 x 600 / 2 + 0.1 x 1500 / 2.
  EXPECT_DOUBLE_EQ(d.mean, 0.5 * 101 / 2 + 0.4 * 600 / 2 + 0.1 * 1500 / 2);
  EXPECT_THROW(quantile_lengths({{0.5, 100}, {0.9, 50}}, 1000, "q"), Error);
  EXPECT_THROW(quantile_lengths({{1.5, 100}}, 1000, "q"), Error);
  EXPECT_THROW(quantile_lengths({{0.5, 2000}}, 1000, "q"), Error);
}

TEST(LengthDistribution, ReadsLengthsFromJsonl) {
  const std::string dir = ::testing::TempDir() + "/lengths_run";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/lengths.jsonl") << "{\"step\": 1, \"lengths\": [3, 4]}\n\n5\n{\"length\": 6}\n";
  EXPECT_EQ(read_length_file(dir + "/lengths.jsonl", "batch.gen_lengths"), (std::vector<int64_t>{3, 4, 5, 6}));
  // A run directory: its metrics.jsonl's counts by length, steps without them (SFT) passed over.
  std::ofstream(dir + "/metrics.jsonl") << "{\"step\": 1, \"sft/loss\": 2.0}\n"
                                        << "{\"step\": 2, \"response/length_counts\": [0, 1, 0, 2]}\n";
  EXPECT_EQ(read_length_file(dir, "batch.gen_lengths"), (std::vector<int64_t>{1, 3, 3}));
  std::ofstream(dir + "/bad.jsonl") << "7\n{\"lengths\": [\"x\"]}\n";
  try {
    read_length_file(dir + "/bad.jsonl", "batch.gen_lengths");
    FAIL() << "a length that is not a number is read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch.gen_lengths"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_length_file(dir + "/none.jsonl", "batch.gen_lengths"), Error);
}

AlgorithmConfig read_config(const Json& batch) {
  Json root = {{"algorithm", "grpo"}, {"models", {{"actor", "qwen2.5-7b"}}}, {"batch", batch}};
  ObjectReader r(root, "");
  return algorithm_config_from_json(r);
}

std::string error_of(const Json& batch) {
  try {
    read_config(batch);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LengthDistribution, BatchKeysChooseTheDistribution) {
  const Json base = {{"prompts", 8}, {"prompt_len", 64}, {"gen_len", 512}};
  AlgorithmConfig c = read_config(base);
  EXPECT_TRUE(c.batch.gen_lengths.fixed());  // no cap given: today's fixed-length workload
  EXPECT_EQ(c.batch.cap(), 512);
  Json capped = base;
  capped["gen_len_max"] = 4096;
  c = read_config(capped);
  EXPECT_FALSE(c.batch.gen_lengths.fixed());
  EXPECT_EQ(c.batch.gen_lengths.cap, 4096);
  EXPECT_EQ(c.batch.gen_len, 512);
  const DataflowGraph g = build_graph(c);
  const Mfc& gen = g.mfcs[size_t(g.mfc_index("actor_gen"))];
  EXPECT_EQ(gen.generation.lengths, c.batch.gen_lengths);
  EXPECT_EQ(gen.max_new_tokens(), 4096);
  EXPECT_EQ(gen.gen_len, 512);

  Json quantiles = capped;
  quantiles["gen_len_quantiles"] = Json::array({Json::array({0.5, 300}), Json::array({0.99, 3000})});
  c = read_config(quantiles);
  EXPECT_EQ(c.batch.gen_len, std::llround(c.batch.gen_lengths.mean));  // the mean comes from the quantiles

  Json low = base;
  low["gen_len_max"] = 100;
  EXPECT_NE(error_of(low).find("batch.gen_len_max"), std::string::npos);
  Json huge = base;
  huge["prompt_len"] = int64_t(1) << 40;
  EXPECT_NE(error_of(huge).find("batch.prompt_len"), std::string::npos);
  huge = base;
  huge["gen_len"] = int64_t(9223372036854775807);
  EXPECT_NE(error_of(huge).find("batch.gen_len"), std::string::npos);
  Json unused = base;  // a shape for lengths that are fixed is a mistake, not a no-op
  unused["gen_len_sigma"] = 0.5;
  EXPECT_NE(error_of(unused).find("batch.gen_len_sigma"), std::string::npos);
  capped["gen_len_sigma"] = 0.5;
  EXPECT_EQ(error_of(capped), "");
  Json both = quantiles;
  both["gen_lengths"] = "x.jsonl";
  EXPECT_NE(error_of(both).find("gen_len_quantiles"), std::string::npos);
}

TEST(LengthDistribution, ObservedLengthsSetTheMeanAndKeepTheConfigsCap) {
  const std::string file = ::testing::TempDir() + "/observed.jsonl";
  std::ofstream(file) << "{\"lengths\": [2, 4, 4, 6]}\n";
  Json batch = {{"prompts", 8}, {"prompt_len", 64}, {"gen_len", 8}, {"gen_lengths", file}};
  AlgorithmConfig c = read_config(batch);
  EXPECT_EQ(c.batch.gen_len, 4);
  EXPECT_EQ(c.batch.cap(), 8);  // the runtime's max_new_tokens stays
  batch.erase("gen_len");
  c = read_config(batch);
  EXPECT_EQ(c.batch.cap(), 6);  // no cap given: the longest observed
}

}  // namespace
}  // namespace realign
