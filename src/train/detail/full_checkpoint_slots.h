// Checkpoints hold every model whole (HF format, plus AdamW moments per parameter), whatever layout trained
// it. A model lives in its home layout, which may shard it over tensor or pipeline parallelism and need not
// include rank 0: it is gathered onto rank 0 to be saved (ShardMover to a one-device layout: each byte
// crosses the wire once), and on resume rank 0 alone reads the checkpoint and moves each home rank its shards
// the same way back, so that only rank 0's node needs the run directory (no shared filesystem). Rank 0 holds
// each model whole meanwhile, as its checkpoint file does.
#pragma once

#include <memory>
#include <vector>

#include "runtime/model_shape.h"
#include "runtime/shard_mover.h"
#include "train/detail/train_checkpoint.h"

namespace realign::train {

// A slot as it lives on this rank, with the layout that holds it. Outside `home` the slot's model and
// optimizer are null (the rank holds nothing of it); `shape` and `trained` are known on every rank.
struct PlacedSlot {
  ModelSlot slot;
  Layout home;
  runtime::ModelShape shape;
  bool trained = false;  // has optimizer state (on the ranks of its home)
};

// Whole-model stand-ins for a set of slots. A slot whose home gives this rank the whole model (tp = pp = 1)
// is used as it is.
class FullCheckpointSlots {
 public:
  // Save side: collective over every rank of the run; on rank 0 slots() are every model whole with its
  // optimizer state, elsewhere they are empty.
  static FullCheckpointSlots gather(comm::Group& global, const std::vector<PlacedSlot>& placed);
  // Load side: on rank 0 whole-model slots (with optimizers for trained models) to load a checkpoint into,
  // elsewhere none. Not collective.
  static FullCheckpointSlots for_loading(int rank, const std::vector<PlacedSlot>& placed);
  // Collective over every rank of the run: moves rank 0's whole models (and optimizer state) into each home
  // rank's shards.
  void scatter(comm::Group& global, const std::vector<PlacedSlot>& placed) const;

  const std::vector<ModelSlot>& slots() const { return slots_; }

 private:
  std::vector<ModelSlot> slots_;
  std::vector<std::unique_ptr<model::Transformer>> models_;
  std::vector<std::unique_ptr<runtime::AdamW>> optims_;
  void add_full(const PlacedSlot& like);
};

}  // namespace realign::train
