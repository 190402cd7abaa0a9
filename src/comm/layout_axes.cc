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

namespace {

// A rank's local index in its stage's dp x tp grid (tp fastest) and the device of a local index.
int local_of(const Layout& layout, const Layout::Coord& c) { return c.dp * layout.tp + c.tp; }
int device_at(const Layout& layout, int stage, int local) {
  return layout.device_of(Layout::Coord{local / layout.tp, local % layout.tp, stage});
}

}  // namespace

std::vector<int> expert_ranks(const Layout& layout, int rank) {
  const Layout::Coord c = layout.coord_of(rank);
  const int first = local_of(layout, c) / layout.ep * layout.ep;
  std::vector<int> out;
  for (int i = 0; i < layout.ep; ++i) out.push_back(device_at(layout, c.pp, first + i));
  return out;
}

std::vector<int> expert_data_ranks(const Layout& layout, int rank) {
  const Layout::Coord c = layout.coord_of(rank);
  std::vector<int> out;
  for (int l = local_of(layout, c) % layout.ep; l < layout.dp * layout.tp; l += layout.ep)
    out.push_back(device_at(layout, c.pp, l));
  return out;
}

}  // namespace realign::comm
