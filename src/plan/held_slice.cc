#include "plan/held_slice.h"

namespace realign {

int slice_dim(const ParamInfo& p) { return p.split_dim < 0 ? 0 : p.split_dim; }

Range held_slice(const ParamInfo& p, int64_t n_layers, const Layout& layout, const Layout::Coord& at) {
  if (!stage_holds(p, at.pp, layout.pp, n_layers)) return Range{0, 0};
  return tp_shard_range(p, at.tp, layout.tp);
}

Range held_slice(const ParamInfo& p, int64_t n_layers, const Layout& layout, int device) {
  if (!layout.contains(device)) return Range{0, 0};
  return held_slice(p, n_layers, layout, layout.coord_of(device));
}

}  // namespace realign
