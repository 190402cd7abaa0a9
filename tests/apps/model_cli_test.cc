// `realign init`, `realign logprobs`, `realign generate`: a random model written, read back and run; bad
// input gives a clear error and a non-zero exit.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "tiny_tokenizer.h"

namespace {

struct CmdResult {
  int code = 0;
  std::string out;
};

CmdResult realign(const std::string& args) {
  const std::string cmd = std::string(REALIGN_BINARY_DIR) + "/src/apps/realign " + args + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.code = WEXITSTATUS(pclose(p));
  return r;
}

std::string fresh_dir(const std::string& name) {
  const std::string d = std::string(REALIGN_BINARY_DIR) + "/tmp_model_cli/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ModelCli, InitThenLogprobsOfTokenLines) {
  const std::string d = fresh_dir("init");
  CmdResult init = realign("init --model-spec gpt2-tiny --out " + d + "/m --seed 3");
  ASSERT_EQ(init.code, 0) << init.out;
  EXPECT_TRUE(std::filesystem::exists(d + "/m/config.json"));
  EXPECT_TRUE(std::filesystem::exists(d + "/m/model.safetensors"));
  write(d + "/in.jsonl", "{\"tokens\": [1, 2, 3, 4]}\n\n{\"tokens\": [5, 6]}\n");
  CmdResult lp = realign("logprobs --model " + d + "/m --input " + d + "/in.jsonl --out " + d + "/out.jsonl");
  ASSERT_EQ(lp.code, 0) << lp.out;
  std::ifstream in(d + "/out.jsonl");
  std::string line;
  std::vector<realign::Json> rows;
  while (std::getline(in, line)) rows.push_back(realign::Json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["tokens"].size(), 4u);
  EXPECT_EQ(rows[0]["logprobs"].size(), 3u);
  EXPECT_EQ(rows[1]["logprobs"].size(), 1u);
  for (double v : rows[0]["logprobs"].get<std::vector<double>>()) EXPECT_LT(v, 0.0);
  // Same seed, same model: the same numbers again (from a config.json this time).
  CmdResult again = realign("init --config " + d + "/m/config.json --out " + d + "/m2 --seed 3");
  ASSERT_EQ(again.code, 0) << again.out;
  CmdResult lp2 =
      realign("logprobs --model " + d + "/m2 --input " + d + "/in.jsonl --out " + d + "/out2.jsonl");
  ASSERT_EQ(lp2.code, 0) << lp2.out;
  std::ifstream a(d + "/out.jsonl"), b(d + "/out2.jsonl");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_EQ(sa.str(), sb.str());
}

realign::Json first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return realign::Json::parse(line);
}

// Text is scored as transformers feeds it: with the BOS that tokenizer_config.json's add_bos_token asks for.
TEST(ModelCli, LogprobsOfTextAddTheTokenizersBos) {
  const std::string d = fresh_dir("bos");
  ASSERT_EQ(realign("init --model-spec llama-tiny --out " + d + "/m").code, 0);
  realign::testing::write_tiny_tokenizer(d + "/m");
  write(d + "/text.jsonl", "{\"text\": \"ab ab\"}\n");
  write(d + "/ids.jsonl", "{\"tokens\": [1, 3, 33, 3, 33]}\n");
  const std::string run = "logprobs --model " + d + "/m --input ";
  ASSERT_EQ(realign(run + d + "/text.jsonl --out " + d + "/text.out").code, 0);
  ASSERT_EQ(realign(run + d + "/ids.jsonl --out " + d + "/ids.out").code, 0);
  const realign::Json text = first_line(d + "/text.out"), ids = first_line(d + "/ids.out");
  EXPECT_EQ(text["tokens"], realign::Json({1, 3, 33, 3, 33}));
  EXPECT_EQ(text["logprobs"], ids["logprobs"]);
  CmdResult r = realign(run + d + "/text.jsonl --out " + d + "/plain.out --no-special-tokens");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(first_line(d + "/plain.out")["tokens"], realign::Json({3, 33, 3, 33}));
}

TEST(ModelCli, BadInputIsAClearError) {
  const std::string d = fresh_dir("bad");
  ASSERT_EQ(realign("init --model-spec llama-tiny --out " + d + "/m").code, 0);
  write(d + "/in.jsonl", "{\"tokens\": [1, 999]}\n");
  CmdResult r = realign("logprobs --model " + d + "/m --input " + d + "/in.jsonl --out " + d + "/o.jsonl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("in.jsonl:1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outside the vocabulary"), std::string::npos) << r.out;

  write(d + "/arch.json", "{\"model_type\": \"bert\", \"hidden_size\": 64}");
  r = realign("init --config " + d + "/arch.json --out " + d + "/x");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("unknown architecture 'bert'"), std::string::npos) << r.out;

  write(
      d + "/heads.json",
      "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, \"intermediate_size\": 128,"
      " \"num_attention_heads\": 4, \"num_key_value_heads\": 3, \"vocab_size\": 100,"
      " \"max_position_embeddings\": 64}");
  r = realign("init --config " + d + "/heads.json --out " + d + "/x");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("KV heads"), std::string::npos) << r.out;

  // A family the planner prices and the runtime does not build: refused by name before any weight is made.
  r = realign("init --model-spec gemma3-1b --out " + d + "/g");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--model-spec: family: the runtime does not build Gemma"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(d + "/g/model.safetensors"));

  // A truncated safetensors file.
  const std::string st = d + "/m/model.safetensors";
  std::filesystem::resize_file(st, std::filesystem::file_size(st) / 2);
  write(d + "/ok.jsonl", "{\"tokens\": [1, 2]}\n");
  r = realign("logprobs --model " + d + "/m --input " + d + "/ok.jsonl --out " + d + "/o.jsonl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("model.safetensors"), std::string::npos) << r.out;

  // Text without a tokenizer in the directory.
  ASSERT_EQ(realign("init --model-spec llama-tiny --out " + d + "/m3").code, 0);
  r = realign("generate --model " + d + "/m3 --prompt hello");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("realign: error"), std::string::npos) << r.out;
}

}  // namespace
