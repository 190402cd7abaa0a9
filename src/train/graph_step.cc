// One step of any stage, as its dataflow graph schedules it (graph/call_schedule.h): the step's calls in
// order, each run by the body registered for its op (call_bodies.cc), each call's inputs moved straight from
// the ranks of the calls of its iteration that produced them. With train.staleness N > 0 an RL step also
// runs the calls of iteration s+N that run ahead (its generation, with the weights the step starts with),
// whose rows stay on their calls' ranks until their own step trains on them.
#include <ATen/ATen.h>

#include <algorithm>

#include "core/check.h"
#include "graph/call_schedule.h"
#include "train/detail/trainer_impl.h"
#include "train/move_order.h"

namespace realign::train {

Json Trainer::graph_step(int64_t step) {
  const Stage& stage = stages_[size_t(current_stage_)];
  const DataflowGraph& graph = stage.graph;
  const int64_t iteration = step - stage.first + 1;
  const int64_t version = iteration - 1;  // updates done: the weights this step's calls read before its own
  const std::vector<CallInstance> calls = step_calls(graph, iteration, stage.steps);
  // An iteration draws its rows when its first call runs, in iteration order, so the draws do not depend on
  // the staleness.
  for (const CallInstance& c : calls)
    if (!iterations_.count(c.iteration)) {
      const std::vector<int64_t> idx = sampler_of(stage).next(stage.draws);
      iterations_[c.iteration] = Iteration{
          {idx, stage.group, stage.draws * stage.group}, version, stage.first + c.iteration - 1, {}};
    }

  // The inputs whose producers ran in earlier steps move first, in one exchange: the ranks that produced them
  // (the generation's, with train.staleness > 0) are then free for this step's own calls, which run beside
  // the calls on other devices. A call's outputs then move to every later call of the step that reads them
  // as soon as it is done: a rank takes part only in the calls and moves it has a share in, in this one
  // order, so a producer's rank that also runs a long call of its own (actor_inf's, then actor_train) does
  // not hold another device's call (critic_train) back until that call is over; where that would hold a
  // reader's rank with calls of its own to run first, the move waits for the reader (move_order.h).
  std::vector<Consumer> early;
  for (const CallInstance& c : calls)
    early.push_back(consumer_of(graph, c, [&](const CallInstance& producer) {
      return std::find(calls.begin(), calls.end(), producer) == calls.end();
    }));
  const int64_t n = iterations_.at(iteration).rows.n;
  place_->set_iteration(iteration);  // they feed this iteration's calls
  std::vector<runtime::Rows> inputs = bring_inputs(n, early);
  std::vector<StepCall> order;
  for (const CallInstance& c : calls) {
    const Mfc& m = graph.mfcs[size_t(c.call)];
    StepCall sc{place_->layout_of(m.name, m.model), {}};
    for (int p : graph.parents(c.call)) {
      const auto at = std::find(calls.begin(), calls.end(), CallInstance{p, c.iteration});
      if (at != calls.end()) sc.reads.push_back(size_t(at - calls.begin()));
    }
    order.push_back(std::move(sc));
  }
  // The moves waiting for their reader (move_order.h), by the index of the call they run before.
  std::vector<std::vector<Consumer>> before(calls.size());
  auto bring = [&](const std::vector<Consumer>& readers, const std::vector<size_t>& reader_at) {
    if (readers.empty()) return;
    const std::vector<runtime::Rows> moved = bring_inputs(n, readers);
    for (size_t r = 0; r < readers.size(); ++r)
      for (const auto& [field, tensor] : moved[r]) inputs[reader_at[r]][field] = tensor;
  };
  std::vector<Json> stats_of(calls.size(), Json::object());
  for (size_t k = 0; k < calls.size(); ++k) {
    const CallInstance& c = calls[k];
    const Mfc& m = graph.mfcs[size_t(c.call)];
    Iteration& it = iterations_.at(c.iteration);
    place_->set_iteration(c.iteration);
    bring(before[k], std::vector<size_t>(before[k].size(), k));
    if (m.kind() != MfcKind::kTrain) it.produced[m.name] = Produced{m.name, order[k].devices, {}};
    run_together({(this->*body_of(m.op).make)(BodyInput{m, it, inputs[k], &stats_of[k]})});
    std::vector<Consumer> readers;
    std::vector<size_t> reader_at;
    for (size_t j = k + 1; j < calls.size(); ++j) {
      Consumer reader =
          consumer_of(graph, calls[j], [&](const CallInstance& producer) { return producer == c; });
      if (reader.inputs.empty()) continue;
      if (move_position(order, k, j) == j) {
        before[j].push_back(std::move(reader));
        continue;
      }
      readers.push_back(std::move(reader));
      reader_at.push_back(j);
    }
    bring(readers, reader_at);
  }
  // The updates' statistics, from each call's first rank: the one point where every rank meets.
  Json stats = Json::object();
  for (size_t k = 0; k < calls.size(); ++k) {
    const Mfc& m = graph.mfcs[size_t(calls[k].call)];
    if (m.kind() == MfcKind::kTrain) stats.update(broadcast_call_stats(m.name, m.model, stats_of[k]));
  }
  if (is_rl(graph.algorithm)) {
    const Iteration& done = iterations_.at(iteration);
    stats["weights/version"] = done.weight_version;
    stats["weights/lag"] = version - done.weight_version;
    if (train_config_.ppo.adaptive_kl) kl_ctl_->update(stats["kl/sequence"].get<double>(), n);
  }
  iterations_.erase(iteration);
  return stats;
}

}  // namespace realign::train
