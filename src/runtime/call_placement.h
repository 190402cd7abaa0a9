// CallPlacement: gives every model function call of a training step the layout its plan assigns, SPMD. It
// builds the call's dp/tp/pp groups, moves a model's parameters from its home layout to the call's layout
// (ShardMover) and the batch rows from the ranks of the calls that produced them straight to the ranks of
// the call that consumes them (exchange_rows; no layout in between), and records each call and each move on
// the step's timeline (cost/simulation_result.h's schema), so the measured timeline lines up with the
// simulated one.
//
// Every model lives in a home layout (CallLayouts::home, the simulator's rule:
// its train call's layout, where its optimizer state stays too, else its first call's layout) which may be
// any mesh: a subset of the ranks at any offset. Ranks outside a model's home hold nothing of it (no
// Transformer); they still know its shape, so they take part in moving it to a call that runs on them.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "comm/world.h"
#include "cost/simulation_result.h"
#include "model/transformer.h"
#include "runtime/call_context.h"
#include "runtime/call_layouts.h"
#include "runtime/model_shape.h"
#include "runtime/row_exchange.h"
#include "runtime/shard_mover.h"

namespace realign::runtime {

// This rank's dp/tp/pp groups in a layout, or nullopt outside it (comm::World::axis_groups).
using AxisGroupsFn = std::function<std::optional<comm::AxisGroups>(const Layout&)>;

class CallPlacement {
 public:
  // `layouts.call`: call name -> layout (from the plan); calls absent from it run in their model's home.
  // `layouts.home`: role -> home layout (any mesh; roles absent from it live on every rank, dp over the
  // world).
  // `layouts.micro_batches`: a call's CallContext::micro_batches. Throws Error naming the call or model when
  // a layout does not fit the world.
  CallPlacement(std::shared_ptr<comm::Group> global, AxisGroupsFn axis_groups, CallLayouts layouts);
  // One rank, every call on it.
  static CallPlacement single_rank();

  int rank() const { return global_->rank(); }
  int world() const { return global_->size(); }
  comm::Group& global() const { return *global_; }
  const std::shared_ptr<comm::Group>& global_ptr() const { return global_; }
  Layout home(Role role) const;
  Layout layout_of(const std::string& call, Role role) const;
  // The call's context on this rank; nullopt when this rank is outside the layout.
  std::optional<CallContext> context(const std::string& call, const Layout& layout) const;

  using CallBody = std::function<void(const CallContext&, model::Transformer&)>;
  // One call to run: `home_model` is this rank's shards of the model in its home layout (null on a rank
  // outside it); `body` runs on the ranks of `layout` with the model there: the home model itself when the
  // layouts agree, else a temporary copy built from reallocated shards and dropped after.
  struct CallRun {
    std::string call;
    Role role = Role::kActor;
    Layout layout;
    ModelShape shape;
    model::Transformer* home_model = nullptr;
    CallBody body;
  };
  // Runs calls that do not depend on each other, in waves (call_waves.h): in a wave, first every parameter
  // move, then the bodies in order, each on its own ranks, so that calls on disjoint devices overlap while a
  // rank holds one reallocated copy at a time. Every rank of the run calls this with the same list
  // (collective over the homes and the calls' layouts).
  void run_calls(const std::vector<CallRun>& runs);
  // One call in its plan layout (layout_of).
  void run_call(const std::string& call, Role role, const ModelShape& shape, model::Transformer* home_model,
                const CallBody& body);

  // Rows that one call produced, moved straight from its layout to the ranks of the call that consumes them
  // (every tp/pp rank of a consumer dp group gets its share; `segments` > 1: each dp group gets its share of
  // every segment, a train call's mini-batches; row_exchange.h). `call`: the consumer, after which the move
  // is named on the timeline.
  struct RowsMove {
    std::string call;
    Layout from, to;
    int64_t n = 0;
    Rows rows;  // this rank's rows in `from` (empty outside it)
    int64_t segments = 1;
  };
  // Every move in one exchange (one message per pair of ranks for all of them); result k: this rank's rows
  // of moves[k] in its `to` layout (empty outside it). Collective over the world.
  std::vector<Rows> move_rows(const std::vector<RowsMove>& moves);

  // The step's timeline: calls and moves since begin_step(), each tagged with the iteration set last (a step
  // with train.staleness > 0 runs calls of several iterations; the default is 1).
  void begin_step();
  void set_iteration(int64_t iteration) { iteration_ = iteration; }
  const std::vector<TimelineEvent>& events() const { return events_; }
  int64_t realloc_bytes() const { return realloc_bytes_; }  // received by this rank this step
  // Every rank's events of this step merged into one timeline (collective over the world).
  Timeline gathered_timeline();
  int64_t data_bytes() const { return data_bytes_; }

 private:
  void run_wave(const std::vector<CallRun>& runs, const std::vector<size_t>& wave);
  ShardMover& mover(Role role, const ModelShape& shape);
  void record(const std::string& name, const std::string& kind, const Layout& layout,
              std::chrono::steady_clock::time_point start, int64_t bytes);

  std::shared_ptr<comm::Group> global_;
  AxisGroupsFn axis_groups_;
  CallLayouts layouts_;
  Layout everywhere_;  // dp over every rank: the home of a role the layouts do not place
  std::map<Role, std::unique_ptr<ShardMover>> movers_;
  std::chrono::steady_clock::time_point step_start_;
  std::vector<TimelineEvent> events_;
  int64_t realloc_bytes_ = 0, data_bytes_ = 0;
  int64_t iteration_ = 1;
};

}  // namespace realign::runtime
