#include "cost/transfer_cost.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "cost/comm_model.h"
#include "cost/memory_model.h"
#include "plan/expert_parallel.h"
#include "plan/held_slice.h"

namespace realign {
namespace {

struct Load {
  double intra = 0, inter = 0;
};

// The stage of every layer under `pp` stages (stage_layers, tabulated once per layout): which stage sends.
std::vector<int> layer_stages(int64_t n_layers, int pp) {
  std::vector<int> table(size_t(n_layers), 0);
  for (int s = 0; s < pp; ++s) {
    const Range r = stage_layers(n_layers, s, pp);
    for (int64_t l = r.begin; l < r.end; ++l) table[size_t(l)] = s;
  }
  return table;
}

// The first stage holding `p` (a tied embedding is also on the last; its first holder sends it).
int first_stage(const ParamInfo& p, int pp, const std::vector<int>& table) {
  if (p.layer == ParamInfo::kEmbedding) return 0;
  if (p.layer == ParamInfo::kHead) return pp - 1;
  return table[size_t(p.layer)];
}

// Parameters that a device lacks alike, counted once: same shape and split, held by the same destination
// stage and sent by the same source stage (or the same embedding/head role), so every device's pieces of one
// are the pieces of all. A 70B model's 720 parameters fall into a few dozen such groups.
struct Alike {
  int param;      // the representative
  int64_t count;  // how many parameters it stands for
  size_t ranges = 0;  // where its tp shards in the source, then in the destination, start in `shards`
};

// Per destination stage, the groups of parameters it holds.
std::vector<std::vector<Alike>> alike_params(const std::vector<ParamInfo>& params, int64_t n_layers,
                                             int src_pp, int dst_pp, const std::vector<int>& src_table) {
  using Key = std::tuple<int, int, std::vector<int64_t>, int, int64_t, bool, bool>;
  std::map<Key, size_t> at;
  std::vector<std::vector<Alike>> out(static_cast<size_t>(dst_pp));
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamInfo& p = params[i];
    // The embedding and head keep their (negative) layer: their holders follow their role, not a stage.
    const int source = p.layer < 0 ? p.layer : first_stage(p, src_pp, src_table);
    for (int s = 0; s < dst_pp; ++s) {
      if (!stage_holds(p, s, dst_pp, n_layers)) continue;
      std::vector<Alike>& groups = out[size_t(s)];
      const auto [it, fresh] = at.emplace(
          Key{s, source, p.shape, p.split_dim, p.split_unit, p.expert, p.tied_to_head}, groups.size());
      if (fresh)
        groups.push_back({int(i), 1});
      else
        ++groups[it->second].count;
    }
  }
  return out;
}

// Walks every missing piece, summed per sender: fn(dst_rank, dst_device, src_device, bytes). Devices with the
// same (stage, tp rank) in both layouts lack the same pieces from the same senders up to the sender's
// replica, so each pattern is computed once; this keeps 1,000-device layouts cheap.
template <class Fn>
void for_each_transfer(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& src,
                       const Layout& dst, Fn&& fn) {
  const std::vector<int> src_table = layer_stages(n_layers, src.pp);
  std::vector<std::vector<Alike>> by_dst_stage = alike_params(params, n_layers, src.pp, dst.pp, src_table);
  // Each group's tp shards in both layouts, computed once rather than once per pattern.
  std::vector<Range> shards;
  for (auto& groups : by_dst_stage)
    for (Alike& alike : groups) {
      alike.ranges = shards.size();
      const ParamInfo& p = params[size_t(alike.param)];
      for (int t = 0; t < src.tp; ++t) shards.push_back(tp_shard_range(p, t, src.tp));
      for (int t = 0; t < dst.tp; ++t) shards.push_back(tp_shard_range(p, t, dst.tp));
    }

  struct Piece {
    int src_tp, src_stage;  // the sender, in the source replica dst_dp mod src.dp
    double bytes;
    int src_ep = -1;  // routed experts: sent by a device of this source ep rank (spread over its edp ranks)
  };
  // Where each sender's entry is in the pattern being built (-1: none yet), indexed by (ep rank + 1, stage,
  // tp rank): a device lacking every layer of a deep source has hundreds of senders and adds to them once per
  // parameter group, so a search of the list would dominate. Reset after each pattern.
  std::vector<int> slot_of(size_t(src.ep + 1) * size_t(src.pp) * size_t(src.tp), -1);
  // Pieces a device at `dc` lacks, given what it already holds (`have_coord` when it is in the source
  // layout), one entry per sender in the order they first appear.
  auto pieces_for = [&](const Layout::Coord& dc, const Layout::Coord* have_coord) {
    std::vector<Piece> out;
    auto add = [&](int t, int stage, double bytes, int e = -1) {
      int& slot = slot_of[(size_t(e + 1) * size_t(src.pp) + size_t(stage)) * size_t(src.tp) + size_t(t)];
      if (slot >= 0) {
        out[size_t(slot)].bytes += bytes;
        return;
      }
      slot = int(out.size());
      out.push_back({t, stage, bytes, e});
    };
    for (const Alike& alike : by_dst_stage[size_t(dc.pp)]) {
      const ParamInfo& p = params[size_t(alike.param)];
      const double copies = double(alike.count);
      if (p.expert) {
        // An expert stack is held as a rectangle of (experts, inner slice): a tp slice of every expert when
        // ep = 1, whole experts of one ep rank when ep > 1 (plan/expert_parallel.h). The source's holders
        // (its tp ranks or its ep ranks) partition the stack, so each sends the part of what the device needs
        // that it holds and the device lacks.
        const int64_t E = p.shape[0], I = p.shape[size_t(p.split_dim)];
        const double cell_bytes = double(p.numel() / (E * I)) * kWeightBytesPerParam;
        struct Rect {
          Range experts, inner;
          double cells() const { return double(experts.size()) * double(inner.size()); }
          Rect operator&(const Rect& o) const {
            return {intersect(experts, o.experts), intersect(inner, o.inner)};
          }
        };
        auto held = [&](const Layout& l, int dp_rank, int tp_rank) {
          return experts_cut_by_tp(l.ep)
                     ? Rect{{0, E}, tp_shard_range(p, tp_rank, l.tp)}
                     : Rect{ep_shard_range(p, ep_rank_of(dp_rank, tp_rank, l.tp, l.ep), l.ep), {0, I}};
        };
        const Rect need = held(dst, dc.dp, dc.tp);
        const bool has = have_coord && stage_holds(p, have_coord->pp, src.pp, n_layers);
        const Rect have = has ? held(src, have_coord->dp, have_coord->tp) : Rect{{0, 0}, {0, 0}};
        const int stage = first_stage(p, src.pp, src_table);
        const bool by_tp = experts_cut_by_tp(src.ep);
        for (int j = 0; j < (by_tp ? src.tp : src.ep); ++j) {
          const Rect slot =
              by_tp ? Rect{{0, E}, tp_shard_range(p, j, src.tp)} : Rect{ep_shard_range(p, j, src.ep), {0, I}};
          const Rect wanted = need & slot;
          const double cells = wanted.cells() - (wanted & have).cells();
          if (cells > 0) add(by_tp ? j : 0, stage, copies * cells * cell_bytes, by_tp ? -1 : j);
        }
        continue;
      }
      const double row_bytes =
          copies * double(p.numel() / p.shape[size_t(slice_dim(p))]) * kWeightBytesPerParam;
      // held_slice: the group is on the device's stage (alike_params), and on its source stage if there.
      const Range* src_shard = &shards[alike.ranges];
      const Range need = src_shard[src.tp + dc.tp];
      const Range have = have_coord && stage_holds(p, have_coord->pp, src.pp, n_layers)
                             ? src_shard[have_coord->tp]
                             : Range{0, 0};
      // need minus have: up to two pieces.
      Range parts[2] = {need, {0, 0}};
      const Range common = intersect(need, have);
      if (common.size() > 0) {
        parts[0] = Range{need.begin, common.begin};
        parts[1] = Range{common.end, need.end};
      }
      const int stage = first_stage(p, src.pp, src_table);
      for (const Range& piece : parts) {
        if (piece.size() <= 0) continue;
        if (p.split_dim < 0 || src.tp == 1) {
          // Replicated (or unsplit at the source): the source tp rank matching ours sends it.
          const int t = p.split_dim < 0 ? dc.tp % src.tp : 0;
          add(t, stage, double(piece.size()) * row_bytes);
          continue;
        }
        for (int t = 0; t < src.tp; ++t) {
          const Range part = intersect(piece, src_shard[t]);
          if (part.size() > 0) add(t, stage, double(part.size()) * row_bytes);
        }
      }
    }
    for (const Piece& piece : out)
      slot_of[(size_t(piece.src_ep + 1) * size_t(src.pp) + size_t(piece.src_stage)) * size_t(src.tp) +
              size_t(piece.src_tp)] = -1;
    return out;
  };

  // Patterns by (dst stage, dst tp rank, and for devices in the source layout their source stage and tp rank;
  // 0 means "not in the source layout"). The sender's replica (dst dp rank mod src.dp) is applied on
  // emission.
  // Where each key's pattern is in `found`: a flat table when the keys are few (dense models), else a map.
  const uint64_t n_keys = uint64_t(dst.pp) * uint64_t(dst.tp) * uint64_t(src.pp * src.tp + 1) *
                          uint64_t(dst.ep) * uint64_t(src.ep);
  std::vector<int> table(n_keys <= (uint64_t(1) << 16) ? size_t(n_keys) : 0, -1);
  std::unordered_map<uint64_t, int> map;
  std::vector<std::vector<Piece>> found;
  auto sender = [&](int replica, int t, int stage) { return src.device_at({replica, t, stage}); };
  for (int r = 0; r < dst.size(); ++r) {
    const int d = dst.first_device + r;
    const Layout::Coord dc = dst.coord_at(r);
    const bool in_src = src.contains(d);
    const Layout::Coord sc = in_src ? src.coord_at(d - src.first_device) : Layout::Coord{};
    uint64_t key = uint64_t(dc.pp);
    key = key * uint64_t(dst.tp) + uint64_t(dc.tp);
    key = key * uint64_t(src.pp * src.tp + 1) + (in_src ? uint64_t(sc.pp * src.tp + sc.tp + 1) : 0);
    // Expert-parallel ranks (1 and 0 for a dense model, leaving its patterns as they were).
    key = key * uint64_t(dst.ep) + uint64_t(ep_rank_of(dc.dp, dc.tp, dst.tp, dst.ep));
    key = key * uint64_t(src.ep) + (in_src ? uint64_t(ep_rank_of(sc.dp, sc.tp, src.tp, src.ep)) : 0);
    int& at = table.empty() ? map.try_emplace(key, -1).first->second : table[size_t(key)];
    if (at < 0) {
      at = int(found.size());
      found.push_back(pieces_for(dc, in_src ? &sc : nullptr));
    }
    const int replica = dc.dp % src.dp;
    const int local = dc.dp * dst.tp + dc.tp;  // spreads expert senders over the source's edp ranks
    for (const Piece& piece : found[size_t(at)]) {
      if (piece.src_ep < 0) {
        fn(r, d, sender(replica, piece.src_tp, piece.src_stage), piece.bytes);
        continue;
      }
      const int l = piece.src_ep + src.ep * (local % expert_data_parallel(src.dp, src.tp, src.ep));
      fn(r, d, sender(l / src.tp, l % src.tp, piece.src_stage), piece.bytes);
    }
  }
}

double link_time(const Load& l, const Link& intra, const Link& inter) {
  return l.intra / intra.bandwidth + l.inter / inter.bandwidth;
}

}  // namespace

std::vector<double> realloc_inbound_bytes(const std::vector<ParamInfo>& params, int64_t n_layers,
                                          const Layout& src, const Layout& dst) {
  std::vector<double> in(size_t(dst.size()), 0.0);
  for_each_transfer(params, n_layers, src, dst,
                    [&](int r, int, int, double bytes) { in[size_t(r)] += bytes; });
  return in;
}

TransferCost realloc_cost(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& src,
                          const Layout& dst, const Cluster& cluster, const HardwareProfile& profile) {
  TransferCost c;
  if (src == dst) return c;
  const int lo = std::min(src.first_device, dst.first_device);
  const int hi = std::max(src.first_device + src.size(), dst.first_device + dst.size());
  std::vector<Load> in(size_t(hi - lo)), out(size_t(hi - lo));
  for_each_transfer(params, n_layers, src, dst, [&](int, int d, int s, double bytes) {
    const bool inter = cluster.node_of(d) != cluster.node_of(s);
    c.crosses_nodes |= inter;
    (inter ? in[size_t(d - lo)].inter : in[size_t(d - lo)].intra) += bytes;
    (inter ? out[size_t(s - lo)].inter : out[size_t(s - lo)].intra) += bytes;
    c.bytes += bytes;
  });
  if (c.bytes <= 0) return c;
  const Link intra = intra_node_link(profile), inter = inter_node_link(profile);
  double worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    c.max_inbound = std::max(c.max_inbound, in[i].intra + in[i].inter);
    c.max_outbound = std::max(c.max_outbound, out[i].intra + out[i].inter);
    worst = std::max({worst, link_time(in[i], intra, inter), link_time(out[i], intra, inter)});
  }
  c.latency_s = c.crosses_nodes ? inter.latency_s : intra.latency_s;
  c.time_s = worst + c.latency_s;
  return c;
}

TransferCost data_move_cost(int64_t n_seqs, double bytes_per_seq, const Layout& producer,
                            const Layout& consumer, const Cluster& cluster, const HardwareProfile& profile,
                            int64_t consumer_segments) {
  TransferCost c;
  const int64_t segments = std::max<int64_t>(1, consumer_segments);
  if ((producer == consumer && segments == 1) || n_seqs <= 0 || bytes_per_seq <= 0) return c;
  // What a device lacks depends only on its consumer dp rank and its producer dp rank (-1: not a producer
  // device): computed once per consumer dp rank for devices outside the producer, and once per run of
  // consecutive devices with the same pair inside it (a tp group), not once per device.
  auto missing_of = [&](int consumer_dp, int producer_dp) {
    const Range have = producer_dp < 0 ? Range{0, 0} : balanced_part(n_seqs, producer_dp, producer.dp);
    int64_t missing = 0;
    for (int64_t j = 0; j < segments; ++j) {  // the rule of realloc/data_plan.h segment_shares
      const Range segment = balanced_part(n_seqs, int(j), int(segments));
      const Range share = balanced_part(segment.size(), consumer_dp, consumer.dp);
      const Range need{segment.begin + share.begin, segment.begin + share.end};
      missing += need.size() - intersect(need, have).size();
    }
    return missing;
  };
  std::vector<int64_t> outside(size_t(consumer.dp), -1);
  int last_consumer_dp = -1, last_producer_dp = -1;
  int64_t last_missing = 0;
  for (int r = 0; r < consumer.size(); ++r) {
    const int d = consumer.first_device + r;
    const int consumer_dp = consumer.coord_at(r).dp;
    const int pr = d - producer.first_device;
    int64_t missing = 0;
    if (pr < 0 || pr >= producer.size()) {
      int64_t& known = outside[size_t(consumer_dp)];
      if (known < 0) known = missing_of(consumer_dp, -1);
      missing = known;
    } else {
      const int producer_dp = producer.coord_at(pr).dp;
      if (consumer_dp != last_consumer_dp || producer_dp != last_producer_dp) {
        last_missing = missing_of(consumer_dp, producer_dp);
        last_consumer_dp = consumer_dp;
        last_producer_dp = producer_dp;
      }
      missing = last_missing;
    }
    const double bytes = double(missing) * bytes_per_seq;
    c.bytes += bytes;
    c.max_inbound = std::max(c.max_inbound, bytes);
  }
  if (c.bytes <= 0) return c;
  const int lo = std::min(producer.first_device, consumer.first_device);
  const int hi =
      std::max(producer.first_device + producer.size(), consumer.first_device + consumer.size()) - 1;
  c.crosses_nodes = cluster.node_of(lo) != cluster.node_of(hi);
  const Link link = c.crosses_nodes ? inter_node_link(profile) : intra_node_link(profile);
  c.max_outbound = c.bytes / producer.size();
  c.latency_s = link.latency_s;
  c.time_s = link.latency_s + std::max(c.max_inbound, c.max_outbound) / link.bandwidth;
  return c;
}

}  // namespace realign
