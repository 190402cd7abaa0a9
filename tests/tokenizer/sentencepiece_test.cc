// SentencePiece through libsentencepiece, on a tiny model trained at test time with spm_train; ids are
// checked against the spm_encode command-line tool on the same model.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "core/error.h"
#include "testing/temp_dir.h"
#include "tokenizer/sentencepiece_tokenizer.h"

namespace realign::tokenizer {
namespace {

const std::vector<std::string> kLines = {
    "The quick brown fox jumps over the lazy dog.",
    "Reinforcement learning from human feedback trains a policy with a reward model.",
    "Parameter reallocation moves weights between layouts before each call.",
    "日本語の文章も少し入れておきます。",
    "Numbers like 12345 and 3.14 appear in text, and so do emoji 😀.",
    "  Leading spaces and\ttabs are normalised by SentencePiece.",
};

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

class SentencePieceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::string corpus;
    for (int rep = 0; rep < 20; ++rep)
      for (const auto& l : kLines) corpus += l + " variant " + std::to_string(rep) + "\n";
    testing::write_file(dir_->file("corpus.txt"), corpus);
    const std::string cmd = "spm_train --input=" + dir_->file("corpus.txt") +
                            " --model_prefix=" + dir_->file("m") +
                            " --vocab_size=150 --model_type=bpe --character_coverage=1.0 --minloglevel=2 "
                            "> " +
                            dir_->file("train.log") + " 2>&1";
    train_rc_ = std::system(cmd.c_str());
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    ASSERT_EQ(train_rc_, 0) << "spm_train failed or is missing (Debian package 'sentencepiece'):\n"
                            << testing::read_file(dir_->file("train.log"));
  }
  static testing::TempDir* dir_;
  static int train_rc_;
};
testing::TempDir* SentencePieceTest::dir_ = nullptr;
int SentencePieceTest::train_rc_ = -1;

TEST_F(SentencePieceTest, MatchesSpmEncodeAndRoundTrips) {
  auto tok = load_tokenizer(dir_->file("m.model"));
  EXPECT_EQ(tok->vocab_size(), 150);
  // spm defaults: unk 0, bos 1, eos 2, no pad.
  EXPECT_EQ(tok->special_ids().unk, 0);
  EXPECT_EQ(tok->special_ids().bos, 1);
  EXPECT_EQ(tok->special_ids().eos, 2);
  EXPECT_EQ(tok->special_ids().pad, std::nullopt);
  std::string input;
  for (const auto& l : kLines) input += l + "\n";
  testing::write_file(dir_->file("input.txt"), input);
  std::istringstream ref(run("spm_encode --model=" + dir_->file("m.model") + " --output_format=id < " +
                             dir_->file("input.txt")));
  for (const auto& l : kLines) {
    std::string line;
    ASSERT_TRUE(std::getline(ref, line)) << "spm_encode gave fewer lines";
    std::vector<int32_t> want;
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) want.push_back(id);
    const auto got = tok->encode(l);
    EXPECT_EQ(got, want) << l;
    // SentencePiece's normaliser folds whitespace runs and tabs; other lines must round-trip exactly.
    if (l.find("  ") == std::string::npos) {
      EXPECT_EQ(tok->decode(got), l);
    }
  }
  EncodeOptions with_bos;
  with_bos.add_special_tokens = true;
  auto ids = tok->encode("fox", with_bos);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(tok->decode(ids, /*skip_special=*/true), "fox");
  EXPECT_EQ(tok->token_to_id("<s>"), 1);
  EXPECT_EQ(tok->token_to_id("no-such-piece"), std::nullopt);
  EXPECT_EQ(tok->id_to_token(2), "</s>");
  EXPECT_THROW(tok->decode({150}), Error);
  EXPECT_THROW(tok->encode(std::string("\xc3")), Error);
}

// Special ids are written as their pieces unless skip_special leaves them out (`realign tokenize --decode
// --skip-special`); libsentencepiece alone drops bos and eos either way.
TEST_F(SentencePieceTest, DecodeWritesSpecialTokensUnlessSkipped) {
  auto tok = load_tokenizer(dir_->file("m.model"));
  std::vector<int32_t> ids = {1};  // <s>
  for (int32_t id : tok->encode("fox jumps")) ids.push_back(id);
  ids.push_back(2);  // </s>
  ids.push_back(0);  // <unk>
  for (int32_t id : tok->encode("dog")) ids.push_back(id);
  EXPECT_EQ(tok->decode(ids), "<s>fox jumps</s><unk>dog");
  EXPECT_EQ(tok->decode(ids, /*skip_special=*/true), "fox jumps dog");
  // Without special ids both decode as SentencePiece does.
  const std::vector<int32_t> plain = tok->encode("over the lazy dog");
  EXPECT_EQ(tok->decode(plain), "over the lazy dog");
  EXPECT_EQ(tok->decode(plain, /*skip_special=*/true), "over the lazy dog");
}

TEST_F(SentencePieceTest, DirectoryWithTokenizerModelLoads) {
  testing::TempDir d;
  testing::write_file(d.file("tokenizer.model"), testing::read_file(dir_->file("m.model")));
  auto tok = load_tokenizer(d.path());
  EXPECT_EQ(tok->vocab_size(), 150);
  testing::write_file(d.file("bad.model"), "not a model");
  EXPECT_THROW(load_tokenizer(d.file("bad.model")), Error);
}

}  // namespace
}  // namespace realign::tokenizer
