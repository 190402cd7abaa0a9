#include "train/detail/full_checkpoint_slots.h"

#include <ATen/ATen.h>

namespace realign::train {
namespace {

// Every rank of the home holds the whole model (no tp or pp cut, no experts spread by ep).
bool whole_on_each_rank(const Layout& home) { return home.tp == 1 && home.pp == 1 && home.ep == 1; }

// Moments "m/<name>" / "v/<name>" of one kind as a name -> tensor map, and back.
ShardMap moments(const std::map<std::string, at::Tensor>& state, const std::string& prefix) {
  ShardMap out;
  for (const auto& [key, t] : state)
    if (key.rfind(prefix, 0) == 0) out[key.substr(prefix.size())] = t;
  return out;
}

}  // namespace

void FullCheckpointSlots::add_full(const PlacedSlot& like) {
  const runtime::ModelShape& s = like.shape;
  models_.push_back(
      std::make_unique<model::Transformer>(s.spec, s.head, model::ParallelContext{}, s.dtype, s.device));
  ModelSlot full{like.slot.role, models_.back().get(), nullptr};
  if (like.trained) {
    optims_.push_back(
        std::make_unique<runtime::AdamW>(full.model->named_params(), runtime::OptimConfig{}, 1));
    full.optim = optims_.back().get();
  }
  slots_.push_back(full);
}

FullCheckpointSlots FullCheckpointSlots::gather(comm::Group& global, const std::vector<PlacedSlot>& placed) {
  FullCheckpointSlots out;
  const Layout one{0, 1, 1, 1};
  for (const PlacedSlot& p : placed) {
    if (p.home.contains(0) && whole_on_each_rank(p.home)) {
      if (global.rank() == 0) out.slots_.push_back(p.slot);
      continue;
    }
    // Rank 0 lacks some of it (a tp/pp shard, or the whole model when its home lies elsewhere).
    const runtime::ModelShape& s = p.shape;
    runtime::ShardMover mover(model_params(s.spec, s.head), s.spec.n_layers, s.dtype);
    const ModelSlot& held = p.slot;  // null outside the home
    const ShardMap params =
        mover.move(global, held.model ? held.model->named_params() : ShardMap{}, p.home, one);
    ShardMap m1, v1;
    int64_t steps = 0;
    if (p.trained) {
      const auto state = held.optim ? held.optim->state_tensors() : std::map<std::string, at::Tensor>{};
      m1 = mover.move(global, moments(state, "m/"), p.home, one);
      v1 = mover.move(global, moments(state, "v/"), p.home, one);
      // The schedule's position, from the home's first rank (every home rank has the same).
      at::Tensor t = at::tensor({held.optim ? held.optim->steps_done() : int64_t(0)}, at::kLong);
      global.broadcast(t, p.home.first_device);
      steps = t.item<int64_t>();
    }
    if (global.rank() != 0) continue;
    out.add_full(p);
    out.slots_.back().model->load_shards(params);
    if (p.trained) {
      std::map<std::string, at::Tensor> state;
      for (const auto& [name, t] : m1) state["m/" + name] = t;
      for (const auto& [name, t] : v1) state["v/" + name] = t;
      out.slots_.back().optim->load_state(state, steps);
    }
  }
  return out;
}

FullCheckpointSlots FullCheckpointSlots::for_loading(int rank, const std::vector<PlacedSlot>& placed) {
  FullCheckpointSlots out;
  if (rank == 0)
    for (const PlacedSlot& p : placed) out.add_full(p);
  return out;
}

void FullCheckpointSlots::scatter(comm::Group& global, const std::vector<PlacedSlot>& placed) const {
  const Layout one{0, 1, 1, 1};
  const bool root = global.rank() == 0;
  for (size_t i = 0; i < placed.size(); ++i) {
    const PlacedSlot& p = placed[i];
    const runtime::ModelShape& s = p.shape;
    runtime::ShardMover mover(model_params(s.spec, s.head), s.spec.n_layers, s.dtype);
    const ModelSlot* full = root ? &slots_[i] : nullptr;
    const ShardMap params = mover.move(global, full ? full->model->named_params() : ShardMap{}, one, p.home);
    if (p.slot.model) p.slot.model->load_shards(params);
    if (!p.trained) continue;
    const auto state = full ? full->optim->state_tensors() : std::map<std::string, at::Tensor>{};
    const ShardMap m1 = mover.move(global, moments(state, "m/"), one, p.home);
    const ShardMap v1 = mover.move(global, moments(state, "v/"), one, p.home);
    at::Tensor steps = at::tensor({full ? full->optim->steps_done() : int64_t(0)}, at::kLong);
    global.broadcast(steps, 0);
    if (!p.slot.optim) continue;
    std::map<std::string, at::Tensor> mine;
    for (const auto& [name, t] : m1) mine["m/" + name] = t;
    for (const auto& [name, t] : v1) mine["v/" + name] = t;
    p.slot.optim->load_state(mine, steps.item<int64_t>());
  }
}

}  // namespace realign::train
