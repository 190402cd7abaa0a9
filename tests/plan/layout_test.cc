#include "plan/layout.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace realign {
namespace {

TEST(Layout, ParsesBothSpellingsAndOffsets) {
  EXPECT_EQ(parse_layout("d2t2p1"), (Layout{0, 2, 2, 1}));
  EXPECT_EQ(parse_layout("p2d1t4@8"), (Layout{8, 1, 4, 2}));
  EXPECT_EQ(parse_layout("d2p1m2"), (Layout{0, 2, 2, 1}));  // ReaLHF's spelling
  EXPECT_EQ(parse_layout("t8"), (Layout{0, 1, 8, 1}));
  EXPECT_EQ(to_string(Layout{4, 2, 1, 2}), "d2t1p2@4");
  EXPECT_EQ(parse_layout(to_string(Layout{4, 2, 1, 2})), (Layout{4, 2, 1, 2}));
}

TEST(Layout, RejectsMalformed) {
  for (const char* bad : {"", "d0t1p1", "x2", "d2d2", "d", "d2t2@", "d2t2@x", "d2-t2", "d999999"})
    EXPECT_THROW(parse_layout(bad, "--from"), Error) << bad;
  try {
    parse_layout("q2", "--from");
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "--from");
    EXPECT_NE(std::string(e.what()).find("d<dp>t<tp>p<pp>"), std::string::npos);
  }
}

TEST(Layout, RankOrderIsPpThenDpThenTp) {
  const Layout l{4, 2, 2, 2};
  EXPECT_EQ(l.device_of({0, 1, 0}), 5);
  EXPECT_EQ(l.device_of({1, 0, 0}), 6);
  EXPECT_EQ(l.device_of({0, 0, 1}), 8);
  for (int d = 4; d < 12; ++d) EXPECT_EQ(l.device_of(l.coord_of(d)), d);
}

}  // namespace
}  // namespace realign
