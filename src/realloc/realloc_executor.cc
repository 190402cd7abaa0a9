#include "realloc/realloc_executor.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <sstream>

#include "core/check.h"
#include "core/error.h"
#include "realloc/message_exchange.h"

namespace realign {
namespace {

std::string shape_str(at::IntArrayRef s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

// The slice of a shard a transfer reads or writes; an expert's slice within the experts `held` (dim 0) keeps
// dim 0 (size 1), so t.dim still names the same dimension.
at::Tensor slice_of(const at::Tensor& shard, const SliceTransfer& t, int64_t offset, const Range& held) {
  const at::Tensor s = t.expert < 0 ? shard : shard.narrow(0, t.expert - held.begin, 1);
  return s.narrow(t.dim, offset, t.range.size());
}

}  // namespace

ShardMap execute_reallocation(comm::Group& group, const TransferPlan& plan, const std::vector<ParamInfo>& params,
                              int64_t n_layers, const ShardMap& source, const ReallocOptions& options,
                              ReallocStats* stats) {
  const int me = group.rank();
  REALIGN_CHECK(plan.from.first_device + plan.from.size() <= group.size() &&
                plan.to.first_device + plan.to.size() <= group.size())
      << "layouts " << to_string(plan.from) << " -> " << to_string(plan.to) << " exceed a group of "
      << group.size();
  const int64_t elem = int64_t(at::elementSize(options.dtype));
  // Source shards this rank must hold, checked up front so a caller's mistake is named, not a hang.
  std::vector<const at::Tensor*> src(params.size(), nullptr);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!holds(params[i], n_layers, plan.from, me)) continue;
    const ParamInfo& p = params[i];
    auto it = source.find(p.name);
    if (it == source.end()) throw Error("realloc source shards", "rank " + std::to_string(me) + " lacks '" + p.name + "'");
    const auto want = held_shape(p, plan.from, me);
    if (it->second.sizes() != at::IntArrayRef(want) || it->second.scalar_type() != options.dtype)
      throw Error("realloc source shards", "'" + p.name + "' on rank " + std::to_string(me) + " is " +
                                               shape_str(it->second.sizes()) + " " +
                                               std::string(c10::toString(it->second.scalar_type())) + ", expected " +
                                               shape_str(want) + " " + c10::toString(options.dtype));
    src[i] = &it->second;
  }
  ShardMap out;
  std::vector<at::Tensor*> dst(params.size(), nullptr);
  if (plan.to.contains(me)) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (!holds(params[i], n_layers, plan.to, me)) continue;
      at::Tensor& t = out[params[i].name];
      t = at::empty(held_shape(params[i], plan.to, me), at::TensorOptions().dtype(options.dtype));
      dst[i] = &t;
    }
  }
  // The experts each rank holds of each expert stack, before and after (an expert slice's position).
  auto experts_held = [&](const SliceTransfer& t, const Layout& layout, int device) {
    return t.expert < 0 ? Range{0, 0} : held_experts(params[size_t(t.param)], n_layers, layout, device);
  };
  ReallocStats local;
  // Run while the first messages are in flight (exchange_messages' `meanwhile`).
  auto copy_locally = [&] {
    for (const SliceTransfer& c : plan.local_copies) {
      if (c.dst != me) continue;
      REALIGN_CHECK(src[size_t(c.param)] && dst[size_t(c.param)]) << params[size_t(c.param)].name;
      slice_of(*dst[size_t(c.param)], c, c.dst_offset, experts_held(c, plan.to, me))
          .copy_(slice_of(*src[size_t(c.param)], c, c.src_offset, experts_held(c, plan.from, me)));
      local.bytes_copied += c.numel * elem;
    }
  };
  // Messages: each transfer touching this rank, cut along the slice's dim 0 into chunks; numbered per pair
  // in plan order (identical on both ends).
  std::vector<realloc_detail::Message> messages;
  std::map<std::pair<int, int>, int> seq;
  for (const SliceTransfer& t : plan.transfers) {
    const bool sending = t.src == me, receiving = t.dst == me;
    int& next = seq[{t.src, t.dst}];
    const ParamInfo& p = params[size_t(t.param)];
    // Rows along the slice's dim 0, and elements per row.
    const int64_t rows = t.expert >= 0 ? 1 : t.dim == 0 ? t.range.size() : p.shape.at(0);
    const int64_t row_elems = rows == 0 ? 0 : t.numel / rows;
    const int64_t chunk_rows = std::max<int64_t>(1, options.chunk_bytes / std::max<int64_t>(1, row_elems * elem));
    for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
      const int64_t n = std::min(chunk_rows, rows - r0);
      const int round = next++;
      if (!sending && !receiving) continue;
      realloc_detail::Message m;
      m.round = round;
      m.src = t.src;
      m.dst = t.dst;
      m.tag = round;
      m.bytes = n * row_elems * elem;
      if (sending) {
        const at::Tensor view =
            slice_of(*src[size_t(t.param)], t, t.src_offset, experts_held(t, plan.from, me)).narrow(0, r0, n);
        m.prepare = [view] { return view.is_contiguous() ? view : view.contiguous(); };
      } else {
        const at::Tensor view =
            slice_of(*dst[size_t(t.param)], t, t.dst_offset, experts_held(t, plan.to, me)).narrow(0, r0, n);
        if (view.is_contiguous()) {
          m.prepare = [view] { return view; };
        } else {
          m.prepare = [view] { return at::empty(view.sizes(), view.options()); };
          m.finish = [view](const at::Tensor& buf) { at::Tensor(view).copy_(buf); };
        }
      }
      messages.push_back(std::move(m));
    }
  }
  realloc_detail::ExchangeStats ex;
  realloc_detail::exchange_messages(group, std::move(messages), options.window_bytes, &ex, copy_locally);
  local.bytes_sent = ex.bytes_sent;
  local.bytes_received = ex.bytes_received;
  local.messages = ex.messages;
  if (stats) *stats = local;
  return out;
}

}  // namespace realign
