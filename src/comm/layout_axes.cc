#include "comm/layout_axes.h"

#include "core/check.h"

namespace realign::comm {
namespace {

int& coordinate(Layout::Coord& c, LayoutAxis axis) {
  switch (axis) {
    case LayoutAxis::kData:
      return c.dp;
    case LayoutAxis::kTensor:
      return c.tp;
    case LayoutAxis::kPipeline:
      return c.pp;
  }
  REALIGN_CHECK(false) << "axis " << int(axis);
  return c.dp;
}

}  // namespace

std::vector<int> axis_ranks(const Layout& layout, int rank, LayoutAxis axis) {
  const Layout::Coord c = layout.coord_of(rank);
  Layout::Coord size{layout.dp, layout.tp, layout.pp};
  std::vector<int> out;
  for (int i = 0; i < coordinate(size, axis); ++i) {
    Layout::Coord x = c;
    coordinate(x, axis) = i;
    out.push_back(layout.device_of(x));
  }
  return out;
}

}  // namespace realign::comm
