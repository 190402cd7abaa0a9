// Megatron's pipeline stages as a launch script sets them: pp stages of equal layer counts, or, with
// num_layers_in_first_pipeline_stage / num_layers_in_last_pipeline_stage, the first and last stages' counts
// and the rest split evenly over the middle stages (megatron-core TransformerConfig.__post_init__: a set end
// holds more than 0 layers, and the middle layers divide by the middle stages), or, with
// account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split, the embedding and the loss
// counted as a layer each of the first and last stages (transformer_layer.py get_transformer_layer_offset:
// the layers plus those divide by pp). realign prices pp stages of balanced layer counts
// (graph/param_layout.h stage_layers); a pipeline runs at the pace of its largest stage, so where the
// script's largest stage holds as many layers as realign's, the two price alike.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace realign::engines {

// The keys a script sets the stages with, for messages.
struct MegatronStageKeys {
  std::string pp, first, last;
  std::string embedding = "", loss = "";  // where the script can count them in the split
};

// How a script cuts the stages: the ends' layer counts, or the embedding and loss counted as layers.
struct MegatronStageSplit {
  std::optional<int> first, last;
  bool embedding_in_split = false, loss_in_split = false;
};

// Empty when pp stages of equal counts hold the layers and no end is set; else a note saying how the
// script's stages are priced. Throws Error naming the key where Megatron refuses the split (pp not dividing
// the layers without set ends; a set end of no layers; middle layers that do not divide by the middle
// stages), or where the script's largest stage holds more layers than realign's balanced ones, which would
// price the pipeline faster than it runs.
// `allowed(pp)`: whether the call's GPUs take that pp (for the message listing equal splits).
std::string megatron_stage_note(
    int layers, int pp, MegatronStageSplit stages, const MegatronStageKeys& keys,
    const std::function<bool(int)>& allowed = [](int) { return true; });

}  // namespace realign::engines
