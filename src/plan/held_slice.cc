#include "plan/held_slice.h"

#include "plan/expert_parallel.h"

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

Range held_experts(const ParamInfo& p, int64_t n_layers, const Layout& layout, int device) {
  if (!layout.contains(device)) return Range{0, 0};
  const Layout::Coord c = layout.coord_of(device);
  if (!stage_holds(p, c.pp, layout.pp, n_layers)) return Range{0, 0};
  if (experts_cut_by_tp(layout.ep)) return Range{0, p.shape.at(0)};
  return ep_shard_range(p, ep_rank_of(c.dp, c.tp, layout.tp, layout.ep), layout.ep);
}

Range held_expert_slice(const ParamInfo& p, int64_t expert, int64_t n_layers, const Layout& layout,
                        int device) {
  const Range experts = held_experts(p, n_layers, layout, device);
  if (expert < experts.begin || expert >= experts.end) return Range{0, 0};
  if (experts_cut_by_tp(layout.ep)) return tp_shard_range(p, layout.coord_of(device).tp, layout.tp);
  return Range{0, p.shape.at(size_t(slice_dim(p)))};
}

bool holds(const ParamInfo& p, int64_t n_layers, const Layout& layout, int device) {
  if (p.expert) return held_experts(p, n_layers, layout, device).size() > 0;
  return held_slice(p, n_layers, layout, device).size() > 0;
}

std::vector<int64_t> held_shape(const ParamInfo& p, const Layout& layout, int device) {
  const Layout::Coord c = layout.coord_of(device);
  if (!p.expert || experts_cut_by_tp(layout.ep)) return tp_shard_shape(p, c.tp, layout.tp);
  std::vector<int64_t> shape = p.shape;
  shape[0] = ep_shard_range(p, ep_rank_of(c.dp, c.tp, layout.tp, layout.ep), layout.ep).size();
  return shape;
}

}  // namespace realign
