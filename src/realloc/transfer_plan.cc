#include "realloc/transfer_plan.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/check.h"
#include "realloc/sender_balance.h"

namespace realign {
namespace {

// Elements per unit along the slice dim: a split_unit of rows/columns times everything else.
int64_t unit_elements(const ParamInfo& p) {
  const int dim = slice_dim(p);
  const int64_t extent = p.shape.at(size_t(dim));
  const int64_t per_row = extent == 0 ? 0 : p.numel() / extent;
  return per_row * (p.split_dim < 0 ? 1 : p.split_unit);
}

int64_t unit_of(const ParamInfo& p) { return p.split_dim < 0 ? 1 : p.split_unit; }

// Expert e of an expert stack, planned like a parameter of its own: local copies of what a destination
// holds already, demands for the rest from the source devices holding each part (grouped by the range they
// hold: one group per tp rank with ep = 1, one holding it whole with ep > 1). Demands are tagged `tag`.
void plan_expert(const ParamInfo& p, int index, int64_t e, int64_t n_layers, const Layout& from,
                 const Layout& to, int tag, TransferPlan& plan,
                 std::vector<realloc_detail::Demand>& demands) {
  const int dim = slice_dim(p);
  const int64_t per_unit = p.numel() / (p.shape.at(0) * p.shape.at(size_t(dim)));
  std::map<std::pair<int64_t, int64_t>, std::vector<int>> sources;
  for (int d = from.first_device; d < from.first_device + from.size(); ++d) {
    const Range r = held_expert_slice(p, e, n_layers, from, d);
    if (r.size() > 0) sources[{r.begin, r.end}].push_back(d);
  }
  for (int d = to.first_device; d < to.first_device + to.size(); ++d) {
    const Range need = held_expert_slice(p, e, n_layers, to, d);
    if (need.size() == 0) continue;
    const Range held = held_expert_slice(p, e, n_layers, from, d), have = intersect(need, held);
    if (have.size() > 0)
      plan.local_copies.push_back(SliceTransfer{index, d, d, dim, have, have.begin - held.begin,
                                                have.begin - need.begin, have.size() * per_unit, e});
    const Range missing[2] = {have.size() > 0 ? Range{need.begin, have.begin} : need,
                              have.size() > 0 ? Range{have.end, need.end} : Range{0, 0}};
    for (const Range& piece : missing) {
      if (piece.size() <= 0) continue;
      plan.elements_minimum += piece.size() * per_unit;
      for (const auto& [range, holders] : sources) {
        const Range part = intersect(piece, Range{range.first, range.second});
        if (part.size() > 0) demands.push_back(realloc_detail::Demand{d, part, per_unit, holders, tag});
      }
    }
  }
}

}  // namespace

bool SliceTransfer::operator==(const SliceTransfer& o) const {
  return param == o.param && src == o.src && dst == o.dst && dim == o.dim && range == o.range &&
         src_offset == o.src_offset && dst_offset == o.dst_offset && numel == o.numel && expert == o.expert;
}

TransferPlan plan_reallocation(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& from,
                               const Layout& to, const TransferPlanOptions& options) {
  REALIGN_CHECK(from.size() > 0 && to.size() > 0 && from.first_device >= 0 && to.first_device >= 0);
  TransferPlan plan;
  plan.from = from;
  plan.to = to;
  using realloc_detail::Demand;
  std::vector<Demand> demands;
  std::vector<std::pair<int, int64_t>> tags;  // a demand's tag -> (parameter, expert or -1)
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamInfo& p = params[i];
    if (p.expert) {
      for (int64_t e = 0; e < p.shape.at(0); ++e) {
        tags.push_back({int(i), e});
        plan_expert(p, int(i), e, n_layers, from, to, int(tags.size()) - 1, plan, demands);
      }
      continue;
    }
    tags.push_back({int(i), -1});
    const int tag = int(tags.size()) - 1;
    const int64_t unit = unit_of(p);
    // Source holders per source tp rank (every dp replica and every stage holding p).
    std::vector<std::vector<int>> holders(size_t(from.tp));
    for (int t = 0; t < from.tp; ++t)
      for (int s = 0; s < from.pp; ++s)
        if (stage_holds(p, s, from.pp, n_layers))
          for (int r = 0; r < from.dp; ++r) holders[size_t(t)].push_back(from.device_of({r, t, s}));
    for (int d = to.first_device; d < to.first_device + to.size(); ++d) {
      const Range need = held_slice(p, n_layers, to, d);
      if (need.size() == 0) continue;
      const Range have = intersect(need, held_slice(p, n_layers, from, d));
      if (have.size() > 0) {
        SliceTransfer copy;
        copy.param = int(i);
        copy.src = copy.dst = d;
        copy.dim = slice_dim(p);
        copy.range = have;
        copy.src_offset = have.begin - held_slice(p, n_layers, from, d).begin;
        copy.dst_offset = have.begin - need.begin;
        copy.numel = have.size() / unit * unit_elements(p);
        plan.local_copies.push_back(copy);
      }
      const Range missing[2] = {have.size() > 0 ? Range{need.begin, have.begin} : need,
                                have.size() > 0 ? Range{have.end, need.end} : Range{0, 0}};
      for (const Range& piece : missing) {
        if (piece.size() <= 0) continue;
        plan.elements_minimum += piece.size() / unit * unit_elements(p);
        if (p.split_dim < 0) {  // replicated: every source rank holding p can send it
          Demand dem{d, Range{piece.begin, piece.end}, unit_elements(p), {}, tag};
          for (const auto& h : holders) dem.candidates.insert(dem.candidates.end(), h.begin(), h.end());
          demands.push_back(std::move(dem));
          continue;
        }
        for (int t = 0; t < from.tp; ++t) {
          const Range part = intersect(piece, tp_shard_range(p, t, from.tp));
          if (part.size() <= 0) continue;
          REALIGN_CHECK(part.begin % unit == 0 && part.end % unit == 0) << p.name;
          demands.push_back(Demand{d, Range{part.begin / unit, part.end / unit}, unit_elements(p),
                                   holders[size_t(t)], tag});
        }
      }
    }
  }
  std::vector<int64_t> load;
  for (const auto& a : realloc_detail::assign_senders(std::move(demands), options.split_min_elements, load)) {
    const auto [index, expert] = tags[size_t(a.tag)];
    const ParamInfo& p = params[size_t(index)];
    const int64_t unit = unit_of(p);
    SliceTransfer t;
    t.param = index;
    t.expert = expert;
    t.src = a.src;
    t.dst = a.dst;
    t.dim = slice_dim(p);
    t.range = Range{a.units.begin * unit, a.units.end * unit};
    const Range src_held = expert >= 0 ? held_expert_slice(p, expert, n_layers, from, a.src)
                                       : held_slice(p, n_layers, from, a.src);
    const Range dst_held =
        expert >= 0 ? held_expert_slice(p, expert, n_layers, to, a.dst) : held_slice(p, n_layers, to, a.dst);
    REALIGN_CHECK(t.range.begin >= src_held.begin && t.range.end <= src_held.end) << p.name;
    t.src_offset = t.range.begin - src_held.begin;
    t.dst_offset = t.range.begin - dst_held.begin;
    t.numel = expert >= 0 ? a.units.size() * (p.numel() / (p.shape.at(0) * p.shape.at(size_t(t.dim))))
                          : a.units.size() * unit_elements(p);
    plan.elements_moved += t.numel;
    plan.transfers.push_back(t);
  }
  auto key = [](const SliceTransfer& t) {
    return std::make_tuple(t.src, t.dst, t.param, t.expert, t.range.begin);
  };
  std::sort(plan.transfers.begin(), plan.transfers.end(),
            [&](const SliceTransfer& a, const SliceTransfer& b) { return key(a) < key(b); });
  std::sort(plan.local_copies.begin(), plan.local_copies.end(),
            [&](const SliceTransfer& a, const SliceTransfer& b) { return key(a) < key(b); });
  return plan;
}

}  // namespace realign
