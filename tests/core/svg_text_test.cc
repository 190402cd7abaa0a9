#include "core/svg_text.h"

#include <gtest/gtest.h>

namespace realign {
namespace {

TEST(SvgText, EscapesMarkup) { EXPECT_EQ(svg_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;"); }

// Widths from DejaVu Sans's advance tables (DejaVuSans.ttf and DejaVuSans-Bold.ttf, in em): the estimate is
// never below the font's, and not far above it.
TEST(SvgText, WidthBoundsDejaVuSans) {
  struct Case {
    const char* text;
    double em, bold_em;
  } cases[] = {{"0123456789", 6.362, 6.958},  {"seconds per step", 8.547, 9.627},
               {"actor_train", 5.405, 6.126}, {"MW", 1.852, 2.098},
               {"device 3", 4.239, 4.704},    {"(solid: call)", 5.477, 6.299},
               {"2.5e-10", 3.839, 4.256}};
  for (const Case& c : cases) {
    const double w = text_width(c.text, 10);
    EXPECT_GE(w, c.em * 10) << c.text;
    EXPECT_LE(w, c.em * 10 * 1.25) << c.text;
    EXPECT_GE(text_width(c.text, 10, true), c.bold_em * 10) << c.text;
  }
  EXPECT_DOUBLE_EQ(text_width("\xc3\xa9", 10), 10.0);  // e-acute: one character, not two bytes
}

}  // namespace
}  // namespace realign
