// Byte-level BPE on small hand-made tokenizer.json files: merges in both forms, added tokens, the template,
// ignore_merges, and errors that name the file and field.
#include <gtest/gtest.h>

#include "core/error.h"
#include "testing/temp_dir.h"
#include "tokenizer/bpe_tokenizer.h"

namespace realign::tokenizer {
namespace {

// A byte-level vocabulary: the 256 byte characters (ids 0..255, in byte order) plus `extra` tokens.
nlohmann::json tiny_tokenizer(const std::vector<std::string>& extra, const nlohmann::json& merges) {
  nlohmann::json vocab = nlohmann::json::object();
  // GPT-2's byte -> character map, written out independently of the implementation under test.
  std::vector<int> bs;
  for (int b = '!'; b <= '~'; ++b) bs.push_back(b);
  for (int b = 0xa1; b <= 0xac; ++b) bs.push_back(b);
  for (int b = 0xae; b <= 0xff; ++b) bs.push_back(b);
  std::vector<int> cs = bs;
  int n = 0;
  for (int b = 0; b < 256; ++b)
    if (std::find(bs.begin(), bs.end(), b) == bs.end()) bs.push_back(b), cs.push_back(256 + n++);
  for (size_t i = 0; i < bs.size(); ++i) {
    std::string ch;
    uint32_t c = cs[i];
    if (c < 0x80)
      ch += static_cast<char>(c);
    else
      ch += static_cast<char>(0xc0 | (c >> 6)), ch += static_cast<char>(0x80 | (c & 0x3f));
    vocab[ch] = bs[i];
  }
  int id = 256;
  for (const auto& t : extra) vocab[t] = id++;
  return {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"added_tokens", nlohmann::json::array()},
  };
}

std::unique_ptr<BpeTokenizer> make(const nlohmann::json& j) {
  return BpeTokenizer::from_tokenizer_json(j, nlohmann::json(), "tokenizer.json");
}

TEST(ByteLevelBpe, MergesInStringAndListFormAgree) {
  // "Ġ" is the byte-level character of a space.
  std::vector<std::string> extra = {"he", "ll", "hell", "hello", "Ġw", "Ġwo"};
  auto a = make(tiny_tokenizer(extra, {"h e", "l l", "he ll", "hell o", "Ġ w", "Ġw o"}));
  nlohmann::json pairs = nlohmann::json::array();
  for (auto [x, y] : std::vector<std::pair<std::string, std::string>>{
           {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"Ġ", "w"}, {"Ġw", "o"}})
    pairs.push_back(nlohmann::json::array({x, y}));
  auto b = make(tiny_tokenizer(extra, pairs));
  const std::vector<int32_t> want = {256 + 3, 256 + 5, 'r', 'l', 'd'};  // hello, Ġwo, r, l, d
  EXPECT_EQ(a->encode("hello world"), want);
  EXPECT_EQ(b->encode("hello world"), want);
  EXPECT_EQ(a->decode(want), "hello world");
  EXPECT_EQ(a->vocab_size(), 256 + 6);
}

TEST(ByteLevelBpe, MergeOrderFollowsRankNotPosition) {
  // "abc": with rank("b c") < rank("a b") the result is a + bc, not ab + c.
  auto t = make(tiny_tokenizer({"bc", "ab"}, {"b c", "a b"}));
  EXPECT_EQ(t->encode("abc"), (std::vector<int32_t>{'a', 256}));
  auto u = make(tiny_tokenizer({"bc", "ab"}, {"a b", "b c"}));
  EXPECT_EQ(u->encode("abc"), (std::vector<int32_t>{257, 'c'}));
  // Equal pairs merge leftmost first: "aaa" -> aa + a.
  auto v = make(tiny_tokenizer({"aa"}, {"a a"}));
  EXPECT_EQ(v->encode("aaa"), (std::vector<int32_t>{256, 'a'}));
}

TEST(ByteLevelBpe, IgnoreMergesEmitsWholeWordTokens) {
  // "abc" is a token but no merge reaches it; with ignore_merges the word maps to it directly (LLaMA-3).
  auto j = tiny_tokenizer({"abc", "ab"}, {"a b"});
  EXPECT_EQ(make(j)->encode("abc"), (std::vector<int32_t>{257, 'c'}));
  j["model"]["ignore_merges"] = true;
  EXPECT_EQ(make(j)->encode("abc"), (std::vector<int32_t>{256}));
}

TEST(ByteLevelBpe, AddedTokensAreMatchedBeforePreTokenization) {
  auto j = tiny_tokenizer({}, nlohmann::json::array());
  j["added_tokens"] = {{{"id", 300}, {"content", "<|eot|>"}, {"special", true}},
                       {{"id", 301}, {"content", "<|eot|>x"}, {"special", true}},  // longest match wins
                       {{"id", 302}, {"content", "[S]"}, {"special", false}, {"lstrip", true}}};
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<|eot|>"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"special_tokens", {{"<|eot|>", {{"id", "<|eot|>"}, {"ids", {300}}, {"tokens", {"<|eot|>"}}}}}}};
  auto t = make(j);
  EXPECT_EQ(t->encode("a<|eot|>b"), (std::vector<int32_t>{'a', 300, 'b'}));
  EXPECT_EQ(t->encode("a<|eot|>xb"), (std::vector<int32_t>{'a', 301, 'b'}));
  EXPECT_EQ(t->encode("a  [S]b"), (std::vector<int32_t>{'a', 302, 'b'}));  // lstrip swallows the spaces
  EncodeOptions plain;
  plain.parse_special = false;
  EXPECT_EQ(t->encode("<|eot|>", plain).size(), 7u);
  EXPECT_EQ(t->encode("[S]", plain), (std::vector<int32_t>{302}));  // non-special added tokens still match
  EncodeOptions templ;
  templ.add_special_tokens = true;
  EXPECT_EQ(t->encode("a", templ), (std::vector<int32_t>{300, 'a'}));
  EXPECT_EQ(t->special_ids().bos, 300);
  EXPECT_EQ(t->decode({300, 'a'}), "<|eot|>a");
  EXPECT_EQ(t->decode({300, 'a'}, true), "a");
  EXPECT_EQ(t->vocab_size(), 303);
  EXPECT_EQ(t->token_to_id("<|eot|>"), 300);
  EXPECT_EQ(t->token_to_id("nope"), std::nullopt);
}

TEST(ByteLevelBpe, SplitRegexFromTheFileAndNfc) {
  auto j = tiny_tokenizer({}, nlohmann::json::array());
  // Split digits one by one, then ByteLevel without its own regex.
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", "\\p{N}|[^\\p{N}]+"}}}, {"behavior", "Isolated"}},
        {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  j["normalizer"] = {{"type", "NFC"}};
  auto t = make(j);
  EXPECT_EQ(t->encode("a12"), (std::vector<int32_t>{'a', '1', '2'}));
  // e + combining acute (U+0301) is normalised to é (U+00E9 = C3 A9) before splitting.
  EXPECT_EQ(t->decode(t->encode("e\xcc\x81")), "\xc3\xa9");
}

TEST(ByteLevelBpe, UnsupportedOrBrokenFilesAreNamed) {
  auto expect_error = [](nlohmann::json j, const std::string& what) {
    try {
      make(j);
      FAIL() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto base = tiny_tokenizer({"ab"}, {"a b"});
  auto j = base;
  j["model"]["type"] = "WordPiece";
  expect_error(j, "'WordPiece' is not supported");
  j = base;
  j["model"]["merges"] = {"a b c"};
  expect_error(j, "merges[0]");
  j = base;
  j["model"]["merges"] = {"a z"};
  expect_error(j, "not in the vocab");
  j = base;
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}};
  expect_error(j, "regex does not compile");
  j = base;
  j["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  expect_error(j, "pre-tokenizer 'BertPreTokenizer' is not supported");
  j = base;
  j["normalizer"] = {{"type", "BertNormalizer"}};
  expect_error(j, "normalizer.type");
  j = base;
  j["decoder"] = {{"type", "WordPiece"}};
  expect_error(j, "decoder.type");
}

TEST(ByteLevelBpe, LoadTokenizerFindsFilesAndNamesMissingOnes) {
  testing::TempDir dir;
  testing::write_file(dir.file("tokenizer.json"), tiny_tokenizer({"ab"}, {"a b"}).dump());
  testing::write_file(dir.file("tokenizer_config.json"),
                      R"({"eos_token": {"content": "ab"}, "pad_token": "a"})");
  auto t = load_tokenizer(dir.path());
  EXPECT_EQ(t->encode("ab"), (std::vector<int32_t>{256}));
  EXPECT_EQ(t->special_ids().eos, 256);
  EXPECT_EQ(t->special_ids().pad, 'a');
  EXPECT_EQ(t->special_ids().bos, std::nullopt);
  testing::TempDir empty;
  EXPECT_THROW(load_tokenizer(empty.path()), Error);
}

// transformers' LLaMA-family tokenizers take add_bos_token / add_eos_token from tokenizer_config.json over
// the file's template; without those flags the template stands.
TEST(ByteLevelBpe, AddBosAndEosFlagsOfTheConfigReplaceTheTemplate) {
  nlohmann::json j = tiny_tokenizer({"ab"}, {"a b"});
  j["added_tokens"] = {{{"id", 300}, {"content", "<s>"}, {"special", true}},
                       {{"id", 301}, {"content", "</s>"}, {"special", true}}};
  j["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                         {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {300}}}}}}};
  EncodeOptions with;
  with.add_special_tokens = true;
  const nlohmann::json config = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  auto templ = BpeTokenizer::from_tokenizer_json(j, config, "d/tokenizer.json");
  EXPECT_EQ(templ->encode("ab", with), (std::vector<int32_t>{300, 256}));
  EXPECT_EQ(templ->encode("ab"), (std::vector<int32_t>{256}));
  nlohmann::json flags = config;
  flags["add_bos_token"] = false;
  flags["add_eos_token"] = true;
  auto eos_only = BpeTokenizer::from_tokenizer_json(j, flags, "d/tokenizer.json");
  EXPECT_EQ(eos_only->encode("ab", with), (std::vector<int32_t>{256, 301}));
  nlohmann::json no_bos = {{"add_bos_token", true}};
  try {
    BpeTokenizer::from_tokenizer_json(j, no_bos, "d/tokenizer.json");
    FAIL() << "add_bos_token without a bos_token was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("d/tokenizer_config.json: add_bos_token"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace realign::tokenizer
