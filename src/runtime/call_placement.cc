#include "runtime/call_placement.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "core/check.h"
#include "core/error.h"
#include "model/transformer.h"
#include "realloc/data_plan.h"
#include "runtime/detail/call_waves.h"

namespace realign::runtime {

using Clock = std::chrono::steady_clock;

CallPlacement::CallPlacement(std::shared_ptr<comm::Group> global, AxisGroupsFn axis_groups,
                             CallLayouts layouts)
    : global_(std::move(global)),
      axis_groups_(std::move(axis_groups)),
      layouts_(std::move(layouts)),
      everywhere_{0, global_->size(), 1, 1} {
  auto check_fits = [&](const std::string& where, const Layout& layout) {
    if (layout.first_device < 0 || layout.first_device + layout.size() > world())
      throw Error(where, to_string(layout) + " needs devices " + std::to_string(layout.first_device) + ".." +
                             std::to_string(layout.first_device + layout.size() - 1) +
                             " but the run has ranks 0.." + std::to_string(world() - 1));
  };
  for (const auto& [call, layout] : layouts_.call) check_fits("plan.mfcs." + call, layout);
  for (const auto& [role, layout] : layouts_.home) check_fits("models." + to_string(role), layout);
  begin_step();
}

CallPlacement CallPlacement::single_rank() {
  return CallPlacement(
      comm::single_rank_group(),
      [](const Layout&) {
        comm::AxisGroups g;
        g.dp = g.tp = g.pp = comm::single_rank_group();
        return std::optional<comm::AxisGroups>(g);
      },
      CallLayouts{});
}

Layout CallPlacement::home(Role role) const {
  auto it = layouts_.home.find(role);
  return it == layouts_.home.end() ? everywhere_ : it->second;
}

Layout CallPlacement::layout_of(const std::string& call, Role role) const {
  auto it = layouts_.call.find(call);
  return it == layouts_.call.end() ? home(role) : it->second;
}

std::optional<CallContext> CallPlacement::context(const std::string& call, const Layout& layout) const {
  std::optional<comm::AxisGroups> g = axis_groups_(layout);
  if (!g) return std::nullopt;
  auto mb = layouts_.micro_batches.find(call);
  return CallContext{call,  g->dp, g->tp, g->pp, mb == layouts_.micro_batches.end() ? 0 : mb->second,
                     g->ep, g->edp};
}

ShardMover& CallPlacement::mover(Role role, const ModelShape& shape) {
  auto& slot = movers_[role];
  if (!slot)
    slot =
        std::make_unique<ShardMover>(model_params(shape.spec, shape.head), shape.spec.n_layers, shape.dtype);
  return *slot;
}

void CallPlacement::run_call(const std::string& call, Role role, const ModelShape& shape,
                             model::Transformer* home_model, const CallBody& body) {
  run_calls({CallRun{call, role, layout_of(call, role), shape, home_model, body}});
}

void CallPlacement::run_calls(const std::vector<CallRun>& runs) {
  std::vector<CallWaveInput> inputs;
  for (const CallRun& r : runs) inputs.push_back({home(r.role), r.layout});
  for (const std::vector<size_t>& wave : call_waves(inputs)) run_wave(runs, wave);
}

void CallPlacement::run_wave(const std::vector<CallRun>& runs, const std::vector<size_t>& wave) {
  // This rank's shards for each call that runs away from its model's home (empty: not moved).
  std::map<size_t, ShardMap> moved;
  for (size_t i : wave) {
    const CallRun& r = runs[i];
    const Layout home_layout = home(r.role);
    REALIGN_CHECK((r.home_model != nullptr) == home_layout.contains(rank()))
        << r.role << ": rank " << rank() << (r.home_model ? " holds" : " lacks") << " the model, home "
        << to_string(home_layout);
    if (r.layout == home_layout) continue;
    const auto start = Clock::now();
    ReallocStats stats;
    const ShardMap held = r.home_model ? r.home_model->named_params() : ShardMap{};
    moved[i] = mover(r.role, r.shape).move(*global_, held, home_layout, r.layout, &stats);
    realloc_bytes_ += stats.bytes_received;
    if (r.layout.contains(rank())) record(r.call, "realloc", r.layout, start, stats.bytes_received);
  }
  for (size_t i : wave) {
    const CallRun& r = runs[i];
    const auto start = Clock::now();
    const std::optional<CallContext> ctx = context(r.call, r.layout);
    if (!ctx) continue;
    auto copied = moved.find(i);
    if (copied == moved.end()) {
      r.body(*ctx, *r.home_model);
    } else {
      const Layout::Coord c = r.layout.coord_of(rank());
      model::Transformer copy(r.shape.spec, r.shape.head, {ctx->tp, c.pp, r.layout.pp, ctx->ep},
                              r.shape.dtype, r.shape.device);
      copy.load_shards(copied->second);
      moved.erase(copied);  // the copy holds the shards now
      r.body(*ctx, copy);
    }
    record(r.call, "call", r.layout, start, 0);
  }
}

std::vector<Rows> CallPlacement::move_rows(const std::vector<RowsMove>& moves) {
  const auto start = Clock::now();
  std::vector<RowMove> exchange;
  for (const RowsMove& m : moves) exchange.push_back({m.n, m.from, m.to, &m.rows, m.segments});
  DataMoveStats stats;
  std::vector<DataMoveStats> per_move;
  std::vector<Rows> out = exchange_rows(*global_, exchange, &stats, &per_move);
  data_bytes_ += stats.bytes_received;
  // One event per consumer on each of its ranks, with the bytes the rank received, when any of the
  // consumer's rows cross the wire (as the simulator's data moves: none when each rank holds what it needs).
  std::map<std::string, std::pair<Layout, int64_t>> consumers;
  for (size_t k = 0; k < moves.size(); ++k) {
    const RowsMove& m = moves[k];
    if (!m.to.contains(rank()) || (m.from == m.to && m.segments == 1)) continue;
    if (plan_data_redistribution(m.n, m.from, m.to, m.segments).transfers.empty()) continue;
    auto& entry = consumers.emplace(m.call, std::make_pair(m.to, int64_t(0))).first->second;
    entry.second += per_move[k].bytes_received;
  }
  for (const auto& [call, entry] : consumers) record(call, "data", entry.first, start, entry.second);
  return out;
}

void CallPlacement::begin_step() {
  step_start_ = Clock::now();
  events_.clear();
  iteration_ = 1;
  realloc_bytes_ = data_bytes_ = 0;
}

void CallPlacement::record(const std::string& name, const std::string& kind, const Layout& layout,
                           Clock::time_point start, int64_t bytes) {
  auto secs = [&](Clock::time_point t) { return std::chrono::duration<double>(t - step_start_).count(); };
  events_.push_back({name, kind, layout.first_device, layout.size(), secs(start), secs(Clock::now()),
                     double(bytes), iteration_});
}

Timeline CallPlacement::gathered_timeline() {
  // Every rank's events as JSON, padded to the longest and gathered; events of one (name, kind, devices,
  // iteration) merge into the span from the latest start (when the last rank joined: a rank may still be busy
  // with another call on other devices, and the simulator too starts a call when all its devices are free) to
  // the latest end, with the bytes every rank received.
  const std::string mine = to_json(Timeline{world(), events_}).dump();
  at::Tensor length = at::tensor({double(mine.size())}, at::kDouble);
  global_->all_reduce(length, comm::ReduceOp::kMax);
  at::Tensor bytes = at::zeros({int64_t(length.item<double>())}, at::kByte);
  std::memcpy(bytes.data_ptr<uint8_t>(), mine.data(), mine.size());
  const at::Tensor all = global_->all_gather_cat(bytes.unsqueeze(0), 0);
  Timeline merged{world(), {}};
  std::map<std::tuple<std::string, std::string, int, int, int64_t>, size_t> index;
  for (int64_t r = 0; r < all.size(0); ++r) {
    const at::Tensor row = all[r].contiguous();
    const char* text = reinterpret_cast<const char*>(row.data_ptr<uint8_t>());
    const Timeline t = timeline_from_json(Json::parse(std::string(text, strnlen(text, size_t(row.numel())))),
                                          "timeline of rank " + std::to_string(r));
    for (const TimelineEvent& e : t.events) {
      const auto key = std::make_tuple(e.name, e.kind, e.first_device, e.n_devices, e.iteration);
      auto it = index.find(key);
      if (it == index.end()) {
        index[key] = merged.events.size();
        merged.events.push_back(e);
        continue;
      }
      TimelineEvent& m = merged.events[it->second];
      m.start_s = std::max(m.start_s, e.start_s);
      m.end_s = std::max(m.end_s, e.end_s);
      m.bytes += e.bytes;
    }
  }
  std::sort(merged.events.begin(), merged.events.end(),
            [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
  return merged;
}

}  // namespace realign::runtime
