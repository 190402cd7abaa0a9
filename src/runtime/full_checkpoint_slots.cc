#include "runtime/full_checkpoint_slots.h"

#include <ATen/ATen.h>

#include "model/shard.h"

namespace realign::runtime {
namespace {

bool sharded(const Layout& home) { return home.tp > 1 || home.pp > 1; }

// Moments "m/<name>" / "v/<name>" of one kind as a name -> tensor map, and back.
ShardMap moments(const std::map<std::string, at::Tensor>& state, const std::string& prefix) {
  ShardMap out;
  for (const auto& [key, t] : state)
    if (key.rfind(prefix, 0) == 0) out[key.substr(prefix.size())] = t;
  return out;
}

}  // namespace

void FullCheckpointSlots::add_full(const ModelSlot& like) {
  models_.push_back(std::make_unique<model::Transformer>(like.model->spec(), like.model->head(),
                                                         model::ParallelContext{}, like.model->dtype(),
                                                         at::Device(at::kCPU)));
  ModelSlot full{like.role, models_.back().get(), nullptr};
  if (like.optim) {
    optims_.push_back(std::make_unique<AdamW>(full.model->named_params(), OptimConfig{}, 1));
    full.optim = optims_.back().get();
  }
  slots_.push_back(full);
}

FullCheckpointSlots FullCheckpointSlots::gather(comm::Group& global, const std::vector<PlacedSlot>& placed) {
  FullCheckpointSlots out;
  const Layout one{0, 1, 1, 1};
  for (const PlacedSlot& p : placed) {
    const model::Transformer& m = *p.slot.model;
    if (!sharded(p.home)) {
      if (global.rank() == 0) out.slots_.push_back(p.slot);
      continue;
    }
    ShardMover mover(model_params(m.spec(), m.head()), m.spec().n_layers, m.dtype());
    const ShardMap params = mover.move(global, m.named_params(), p.home, one);
    ShardMap m1, v1;
    if (p.slot.optim) {
      const auto state = p.slot.optim->state_tensors();
      m1 = mover.move(global, moments(state, "m/"), p.home, one);
      v1 = mover.move(global, moments(state, "v/"), p.home, one);
    }
    if (global.rank() != 0) continue;
    out.add_full(p.slot);
    out.slots_.back().model->load_shards(params);
    if (p.slot.optim) {
      std::map<std::string, at::Tensor> state;
      for (const auto& [name, t] : m1) state["m/" + name] = t;
      for (const auto& [name, t] : v1) state["v/" + name] = t;
      out.slots_.back().optim->load_state(state, p.slot.optim->steps_done());
    }
  }
  return out;
}

FullCheckpointSlots FullCheckpointSlots::for_loading(const std::vector<PlacedSlot>& placed) {
  FullCheckpointSlots out;
  for (const PlacedSlot& p : placed) {
    if (sharded(p.home)) out.add_full(p.slot);
    else out.slots_.push_back(p.slot);
  }
  return out;
}

void FullCheckpointSlots::scatter(int rank, const std::vector<PlacedSlot>& placed) const {
  for (size_t i = 0; i < placed.size(); ++i) {
    const PlacedSlot& p = placed[i];
    if (!sharded(p.home)) continue;
    const Layout::Coord c = p.home.coord_of(rank);
    const ModelSlot& full = slots_[i];
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
