#include "core/utf8.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(Utf8, FindsTheFirstInvalidSequence) {
  EXPECT_EQ(find_invalid_utf8("plain \xC3\xA9 \xF0\x9F\x99\x82"), std::nullopt);
  EXPECT_EQ(find_invalid_utf8("ab\xC0\xAF"), 2u);        // overlong '/'
  EXPECT_EQ(find_invalid_utf8("a\xED\xA0\x80"), 1u);     // a surrogate
  EXPECT_EQ(find_invalid_utf8("abc\xE2\x82"), 3u);       // truncated
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
}

TEST(Utf8, CodePointsRoundTrip) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x99\x82";  // a, e acute, euro, emoji
  std::string again;
  std::vector<uint32_t> cps;
  for (size_t pos = 0; pos < text.size();) cps.push_back(next_code_point(text, pos));
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x61, 0xE9, 0x20AC, 0x1F642}));
  for (uint32_t cp : cps) append_utf8(again, cp);
  EXPECT_EQ(again, text);
}

}  // namespace
}  // namespace realign
