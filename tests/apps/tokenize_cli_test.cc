// `realign tokenize`: ids with and without the special tokens transformers adds, --json, --decode, and bad
// input named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_run.h"
#include "core/json.h"
#include "tiny_tokenizer.h"

namespace realign::testing {
namespace {

std::string tokenizer_dir() {
  const std::string d = std::string(REALIGN_BINARY_DIR) + "/tmp_tokenize_cli";
  std::filesystem::create_directories(d);
  write_tiny_tokenizer(d);
  return d;
}

TEST(TokenizeCli, EncodesWithTheConfigsBosAndDecodes) {
  const std::string d = tokenizer_dir();
  CliResult r = run_realign("tokenize --model " + d + " --text 'ab ab'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "1 3 33 3 33\n");
  r = run_realign("tokenize --model " + d + " --no-special-tokens --text 'ab ab'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "3 33 3 33\n");
  // stdin, a character outside the vocabulary as byte-fallback tokens, and --json with the token strings.
  std::ofstream(d + "/e_acute.txt") << "\u00e9";
  r = run_realign("tokenize --model " + d + " --json < " + d + "/e_acute.txt");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["ids"], Json({1, 3, 30, 31}));
  EXPECT_EQ(j["tokens"], Json({"<s>", "\u2581", "<0xC3>", "<0xA9>"}));
  r = run_realign("tokenize --model " + d + " --decode --text '[1, 3, 33, 3, 33]'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "<s> ab ab");
  r = run_realign("tokenize --model " + d + " --decode --skip-special --text '1,3,30,31'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "\u00e9");
}

// A conversation rendered with the chat template, then encoded as a training prompt: the template printed the
// BOS, so none is added; a turn without a role is named.
TEST(TokenizeCli, MessagesAreRenderedWithTheChatTemplate) {
  const std::string d = tokenizer_dir();
  std::ofstream(d + "/conv.json") << R"({"messages": [{"role": "user", "content": "ab"}]})";
  CliResult r = run_realign("tokenize --model " + d + " --messages --add-generation-prompt --json < " + d +
                            "/conv.json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["text"], "<s>u ab a");
  EXPECT_EQ(j["ids"], Json({1, 3, 24, 3, 33, 32}));
  std::ofstream(d + "/bad.json") << R"([{"content": "ab"}])";
  r = run_realign("tokenize --model " + d + " --messages < " + d + "/bad.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("stdin: messages[0].role"), std::string::npos) << r.out;
}

TEST(TokenizeCli, BadInputIsNamed) {
  const std::string d = tokenizer_dir();
  CliResult r = run_realign("tokenize --model " + d + " --decode --text '1 x'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--text"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'x' is not a token id in [0, 35)"), std::string::npos) << r.out;
  r = run_realign("tokenize --model " + d + " --decode --text '99'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("'99'"), std::string::npos) << r.out;
  r = run_realign("tokenize --model " + d + "/nothing-here --text a");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("nothing-here"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace realign::testing
