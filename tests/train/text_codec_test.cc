// TextCodec with a model directory's tokenizer: prompts begin with the BOS transformers adds (once, also when
// a chat template already printed it), responses get none, and the flag turns it off.
#include "train/text_codec.h"

#include <gtest/gtest.h>

#include "apps/tiny_tokenizer.h"
#include "testing/temp_dir.h"

namespace realign::train {
namespace {

TEST(TextCodec, PromptsBeginWithTheTokenizersBosOnce) {
  testing::TempDir dir;
  testing::write_tiny_tokenizer(dir.path());
  std::shared_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(dir.path());
  const TextCodec codec = TextCodec::from_tokenizer(tok);
  EXPECT_EQ(codec.encode_prompt("ab ab"), (runtime::TokenIds{1, 3, 33, 3, 33}));
  EXPECT_EQ(codec.encode("ab ab"), (runtime::TokenIds{3, 33, 3, 33}));
  // "<s>" printed by a chat template is the BOS already.
  EXPECT_EQ(codec.encode_prompt("<s>ab"), (runtime::TokenIds{1, 3, 33}));
  const TextCodec plain = TextCodec::from_tokenizer(tok, /*special_tokens=*/false);
  EXPECT_EQ(plain.encode_prompt("ab ab"), (runtime::TokenIds{3, 33, 3, 33}));
  EXPECT_EQ(TextCodec::bytes().encode_prompt("ab"), (runtime::TokenIds{'a', 'b'}));
}

}  // namespace
}  // namespace realign::train
