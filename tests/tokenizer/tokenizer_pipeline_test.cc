// The tokenizer.json pieces on their own: normalisers, pre-tokenizers (every split behaviour, Metaspace's
// prepend schemes), decoders, and BPE's byte fallback and fused unknowns. Expected values follow HF
// tokenizers' documented semantics, worked out by hand.
#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/text_normalizer.h"
#include "tokenizer/token_decoder.h"

namespace realign::tokenizer {
namespace {

std::vector<std::string> words(const PreTokenizer& p, const std::string& text, bool at_start = true) {
  std::vector<std::string> out;
  for (const PreToken& t : p.apply({text, at_start})) out.push_back(t.text);
  return out;
}

PreTokenizer split(const std::string& behavior, bool invert = false) {
  return PreTokenizer(
      {{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}}, "p");
}

TEST(TokenizerPipeline, SplitBehaviours) {
  using V = std::vector<std::string>;
  EXPECT_EQ(words(split("Removed"), "a-b--c"), (V{"a", "b", "c"}));
  EXPECT_EQ(words(split("Isolated"), "a-b--c"), (V{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(words(split("MergedWithPrevious"), "a-b--c"), (V{"a-", "b-", "-", "c"}));
  EXPECT_EQ(words(split("MergedWithNext"), "a-b--c"), (V{"a", "-b", "-", "-c"}));
  EXPECT_EQ(words(split("Contiguous"), "a-b--c"), (V{"a", "-", "b", "--", "c"}));
  // Inverted: the matches are the words (each match its own), the rest is removed.
  EXPECT_EQ(words(split("Removed", /*invert=*/true), "a-b--c"), (V{"-", "-", "-"}));
  EXPECT_THROW(split("Sideways"), Error);
}

TEST(TokenizerPipeline, MetaspacePrependSchemes) {
  using V = std::vector<std::string>;
  auto meta = [](const std::string& scheme, bool split) {
    return PreTokenizer(
        {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}, {"split", split}}, "p");
  };
  EXPECT_EQ(words(meta("always", true), "Hi  there"), (V{"▁Hi", "▁", "▁there"}));
  EXPECT_EQ(words(meta("always", false), "Hi there"), (V{"▁Hi▁there"}));
  EXPECT_EQ(words(meta("first", false), "Hi", /*at_start=*/false), (V{"Hi"}));
  EXPECT_EQ(words(meta("first", false), "Hi", /*at_start=*/true), (V{"▁Hi"}));
  EXPECT_EQ(words(meta("never", false), "Hi there"), (V{"Hi▁there"}));
  EXPECT_EQ(words(meta("always", false), " x"), (V{"▁x"}));  // already starts with the replacement
  // The pre-0.14 flag.
  PreTokenizer legacy({{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", false}}, "p");
  EXPECT_EQ(words(legacy, "a b"), (V{"a", "▁b"}));
  try {
    meta("sometimes", true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.prepend_scheme"), std::string::npos) << e.what();
  }
}

TEST(TokenizerPipeline, DigitsAndSequences) {
  using V = std::vector<std::string>;
  PreTokenizer seq(
      {{"type", "Sequence"},
       {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Digits"}, {"individual_digits", true}}}}},
      "p");
  EXPECT_EQ(words(seq, " ab12 3\tc "), (V{"ab", "1", "2", "3", "c"}));
  PreTokenizer empty({{"type", "Sequence"}, {"pretokenizers", nlohmann::json::array()}}, "p");
  EXPECT_EQ(words(empty, "a b"), (V{"a b"}));
}

TEST(TokenizerPipeline, Normalizers) {
  TextNormalizer empty({{"type", "Sequence"}, {"normalizers", nlohmann::json::array()}}, "n");
  EXPECT_EQ(empty.apply("Ab c"), "Ab c");
  TextNormalizer seq({{"type", "Sequence"},
                      {"normalizers",
                       {{{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}},
                        {{"type", "NFKC"}},
                        {{"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", "_"}},
                        {{"type", "Prepend"}, {"prepend", ">"}}}}},
                     "n");
  // NFKC folds the ligature and the full-width letter; U+3000 is stripped on the left only.
  EXPECT_EQ(seq.apply("\u3000 \uFB01ne  \uFF21 "), ">fine_A_");
  EXPECT_EQ(seq.apply(""), "");  // Prepend leaves empty text alone
  TextNormalizer nfc({{"type", "NFC"}}, "n");
  EXPECT_EQ(nfc.apply("e\u0301"), "\u00e9");
  TextNormalizer lower({{"type", "Lowercase"}}, "n");
  EXPECT_EQ(lower.apply("ÀB"), "àb");
  try {
    TextNormalizer({{"type", "Sequence"}, {"normalizers", {{{"type", "Precompiled"}}}}},
                   "t.json: normalizer");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: normalizer.normalizers[0].type"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("'Precompiled'"), std::string::npos) << e.what();
  }
}

TEST(TokenizerPipeline, Decoders) {
  TokenDecoder sp({{"type", "Sequence"},
                   {"decoders",
                    {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                     {{"type", "ByteFallback"}},
                     {{"type", "Fuse"}},
                     {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}},
                  "d");
  EXPECT_EQ(sp.decode({"▁Hello", "▁", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "▁x"}), "Hello 😀 x");
  // A byte run that is not UTF-8: one U+FFFD per byte.
  EXPECT_EQ(sp.decode({"▁a", "<0xF0>", "<0x9F>", "b"}), "a\uFFFD\uFFFDb");
  TokenDecoder meta({{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}}, "d");
  EXPECT_EQ(meta.decode({"▁Hi", "▁there"}), "Hi there");
  TokenDecoder byte_level = TokenDecoder::byte_level();
  EXPECT_EQ(byte_level.decode({"Hello", "Ġw", "<|eot|>", "Ġ"}), "Hello w<|eot|> ");
  TokenDecoder none;
  EXPECT_EQ(none.decode({"a", "b"}), "a b");  // HF joins with spaces when there is no decoder
  EXPECT_THROW(TokenDecoder({{"type", "CTC"}}, "d"), Error);
}

TEST(TokenizerPipeline, BpeByteFallbackAndFusedUnknowns) {
  std::unordered_map<std::string, int32_t> vocab = {{"<unk>", 0}, {"<0xC3>", 1}, {"<0xA9>", 2},
                                                    {"a", 3},     {"b", 4},      {"ab", 5}};
  const std::vector<std::pair<std::string, std::string>> merges = {{"a", "b"}};
  auto chars = [](const std::vector<std::string>& s) {
    return std::vector<std::string_view>(s.begin(), s.end());
  };
  const std::vector<std::string> word = {"a", "b", "\u00e9", "\u4e00", "\u4e8c", "a"};
  BpeUnknown fallback;
  fallback.byte_fallback = true;
  fallback.unk_id = 0;
  BpeModel with_bytes(vocab, merges, false, "v", fallback);
  // é has byte tokens; 一 and 二 do not, and are unknown, each on its own.
  EXPECT_EQ(with_bytes.encode_word(chars(word), ""), (std::vector<int32_t>{5, 1, 2, 0, 0, 3}));
  BpeUnknown fused;
  fused.unk_id = 0;
  fused.fuse_unk = true;
  BpeModel fuse(vocab, merges, false, "v", fused);
  EXPECT_EQ(fuse.encode_word(chars(word), ""), (std::vector<int32_t>{5, 0, 3}));
  BpeModel strict(vocab, merges, false, "v");
  EXPECT_THROW(strict.encode_word(chars(word), ""), Error);
}

}  // namespace
}  // namespace realign::tokenizer
