#include "train/detail/full_checkpoint_slots.h"

#include <ATen/ATen.h>

#include "model/shard.h"

namespace realign::runtime {
namespace {

// Every rank of the home holds the whole model (no tp or pp cut).
bool whole_on_each_rank(const Layout& home) { return home.tp == 1 && home.pp == 1; }

// Moments "m/<name>" / "v/<name>" of one kind as a name -> tensor map, and back.
ShardMap moments(const std::map<std::string, at::Tensor>& state, const std::string& prefix) {
  ShardMap out;
  for (const auto& [key, t] : state)
    if (key.rfind(prefix, 0) == 0) out[key.substr(prefix.size())] = t;
  return out;
}

}  // namespace

void FullCheckpointSlots::add_full(const PlacedSlot& like) {
  const ModelShape& s = like.shape;
  models_.push_back(
      std::make_unique<model::Transformer>(s.spec, s.head, model::ParallelContext{}, s.dtype, s.device));
  ModelSlot full{like.slot.role, models_.back().get(), nullptr};
  if (like.trained) {
    optims_.push_back(std::make_unique<AdamW>(full.model->named_params(), OptimConfig{}, 1));
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
    const ModelShape& s = p.shape;
    ShardMover mover(model_params(s.spec, s.head), s.spec.n_layers, s.dtype);
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
  for (const PlacedSlot& p : placed) {
    if (!p.home.contains(rank)) {
      out.index_.push_back(-1);
      continue;
    }
    out.index_.push_back(int(out.slots_.size()));
    if (whole_on_each_rank(p.home))
      out.slots_.push_back(p.slot);
    else
      out.add_full(p);
  }
  return out;
}

void FullCheckpointSlots::scatter(int rank, const std::vector<PlacedSlot>& placed) const {
  for (size_t i = 0; i < placed.size(); ++i) {
    const PlacedSlot& p = placed[i];
    if (index_[i] < 0 || whole_on_each_rank(p.home)) continue;
    const Layout::Coord c = p.home.coord_of(rank);
    const ModelSlot& full = slots_[size_t(index_[i])];
    auto cut = [&](const std::map<std::string, at::Tensor>& whole) {
      ShardMap shards;
      for (const ParamInfo& info : p.slot.model->param_infos())
        shards[info.name] = model::shard_of(whole.at(info.name), info, c.tp, p.home.tp);
      return shards;
    };
    p.slot.model->load_shards(cut(full.model->named_params()));
    if (p.slot.optim) {
      const auto state = full.optim->state_tensors();
      std::map<std::string, at::Tensor> mine;
      for (const char* prefix : {"m/", "v/"})
        for (const auto& [name, t] : cut(moments(state, prefix))) mine[prefix + name] = t;
      p.slot.optim->load_state(mine, full.optim->steps_done());
    }
  }
}

}  // namespace realign::runtime
