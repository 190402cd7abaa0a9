// A training checkpoint: every model of the run in HF format (<role>/config.json + model.safetensors, fp32),
// the optimizer state of the trained ones (<role>.optim.safetensors), and the loop's state (step, data
// positions, KL coefficient) in the manifest's metadata, all through the atomic CheckpointWriter. Loading
// checks that each model's architecture matches the config before touching any weights.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "graph/role.h"
#include "model/transformer.h"
#include "runtime/adamw.h"

namespace realign::train {

struct ModelSlot {
  Role role = Role::kActor;  // its files are named by to_string(role)
  model::Transformer* model = nullptr;
  runtime::AdamW* optim = nullptr;  // null for models that are not trained
};

// Writes checkpoints/step-N (one rank calls it; tp = pp = 1: the shards are the full parameters), with
// `in_flight`, the rows of the RL iterations generated and not yet trained on (train.staleness > 0), as
// in_flight.safetensors when there are any.
void save_train_checkpoint(const std::string& checkpoints_root, int64_t step,
                           const std::vector<ModelSlot>& slots, const Json& loop_state,
                           const std::map<std::string, at::Tensor>& in_flight);

// Verifies checkpoints/step-N (checksums, then every slot's architecture and head against the checkpoint's),
// loads the weights and optimizer states into the slots and returns the loop state. Throws Error naming the
// checkpoint and the model on any mismatch (a checkpoint from another model).
// `in_flight` receives the rows saved in flight (empty when none were).
Json load_train_checkpoint(const std::string& checkpoints_root, int64_t step,
                           const std::vector<ModelSlot>& slots, std::map<std::string, at::Tensor>* in_flight);

}  // namespace realign::train
