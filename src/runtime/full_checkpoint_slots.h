// Checkpoints hold every model whole (HF format, plus AdamW moments per parameter), whatever layout trained it.
// A model sharded over tensor or pipeline parallelism in its home layout is gathered onto rank 0 to be saved
// (ShardMover to a one-device layout: each byte crosses the wire once) and cut back into each rank's shards
// when a run resumes.
#pragma once

#include <memory>
#include <vector>

#include "runtime/train_checkpoint.h"
#include "runtime/shard_mover.h"

namespace realign::runtime {

// A slot as it lives on this rank, with the layout that shards it.
struct PlacedSlot {
  ModelSlot slot;
  Layout home;
};

// Whole-model stand-ins for a set of slots. Slots whose home does not shard the model (tp = pp = 1) are used
// as they are.
class FullCheckpointSlots {
 public:
  // Save side: collective over every rank of the homes; on rank 0 slots() are the whole models and optimizer
  // states, elsewhere they are empty.
  static FullCheckpointSlots gather(comm::Group& global, const std::vector<PlacedSlot>& placed);
  // Load side: whole-model slots to load a checkpoint into (every rank), then scatter() cuts them back.
  static FullCheckpointSlots for_loading(const std::vector<PlacedSlot>& placed);
  void scatter(int rank, const std::vector<PlacedSlot>& placed) const;

  const std::vector<ModelSlot>& slots() const { return slots_; }

 private:
  std::vector<ModelSlot> slots_;
  std::vector<std::unique_ptr<model::Transformer>> models_;
  std::vector<std::unique_ptr<AdamW>> optims_;
  void add_full(const ModelSlot& like);
};

}  // namespace realign::runtime
