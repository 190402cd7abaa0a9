#include "engines/megatron_stages.h"

#include <algorithm>

#include "core/error.h"

namespace realign::engines {
namespace {

// The pp values that cut `layers` into equal stages on the call's GPUs, for messages.
std::string even_pp_values(int layers, const std::function<bool(int)>& allowed) {
  std::string valid;
  for (int d = 1; d <= layers; ++d)
    if (layers % d == 0 && allowed(d)) valid += (valid.empty() ? "" : ", ") + std::to_string(d);
  return valid;
}

}  // namespace

std::string megatron_stage_note(int layers, int pp, MegatronStageSplit stages, const MegatronStageKeys& keys,
                                const std::function<bool(int)>& allowed) {
  std::optional<int>&first = stages.first, &last = stages.last;
  const int extra = int(stages.embedding_in_split) + int(stages.loss_in_split);
  if (extra > 0) {
    const std::string& flag = stages.embedding_in_split ? keys.embedding : keys.loss;
    if (first || last)
      throw Error(flag, "Megatron takes " + keys.first + " / " + keys.last +
                            " or the embedding and loss counted in the split, not both");
    if ((layers + extra) % pp != 0) {
      std::string valid;
      for (int d = 1; d <= layers + extra; ++d)
        if ((layers + extra) % d == 0 && allowed(d)) valid += (valid.empty() ? "" : ", ") + std::to_string(d);
      throw Error(keys.pp, std::to_string(pp) + " does not divide the " + std::to_string(layers) +
                               " layers and " + std::to_string(extra) + " counted for " +
                               flag.substr(flag.rfind('.') + 1) +
                               ": Megatron cuts equal stages of them (pp " + valid + " would)");
    }
    if (pp == 1) return "";
    const int per_stage = (layers + extra) / pp;
    if (per_stage <= 1)  // an end stage would hold the embedding or the loss alone
      throw Error(flag, "with pp " + std::to_string(pp) +
                            " the first or last stage would hold no layer of the " + std::to_string(layers) +
                            "; realign prices stages that hold layers");
    first = per_stage - int(stages.embedding_in_split);
    last = per_stage - int(stages.loss_in_split);
  }
  if (!first && !last) {
    if (layers % pp == 0) return "";
    throw Error(keys.pp, std::to_string(pp) + " does not divide the " + std::to_string(layers) +
                             " layers: Megatron cuts equal stages unless the script sets " + keys.first +
                             " or " + keys.last + " (pp " + even_pp_values(layers, allowed) + " would be)");
  }
  int middle_layers = layers, middle_stages = pp;
  for (const auto& [end, key] : {std::pair{first, keys.first}, std::pair{last, keys.last}}) {
    if (!end) continue;
    if (*end <= 0) throw Error(key, std::to_string(*end) + ": Megatron needs a set end stage to hold layers");
    middle_layers -= *end;
    --middle_stages;
  }
  const std::string& named = first ? keys.first : keys.last;
  const bool divides = middle_stages > 0 ? middle_layers % middle_stages == 0 : middle_layers == 0;
  if (middle_stages < 0 || middle_layers < 0 || !divides)
    throw Error(named, std::to_string(middle_layers) + " layers left for " + std::to_string(middle_stages) +
                           " middle stages of pp " + std::to_string(pp) +
                           ": Megatron needs the middle layers to divide by the middle stages");
  const int middle = middle_stages > 0 ? middle_layers / middle_stages : 0;
  const int largest = std::max({first.value_or(0), last.value_or(0), middle});
  const int balanced = (layers + pp - 1) / pp;  // realign's largest stage (stage_layers)
  std::string split = first ? std::to_string(*first) : "";
  if (middle_stages > 0)
    split += (split.empty() ? "" : ", ") + std::to_string(middle_stages) + " x " + std::to_string(middle);
  if (last) split += ", " + std::to_string(*last);
  if (largest > balanced)
    throw Error(named, "stages of " + split + " layers: the largest, " + std::to_string(largest) +
                           ", runs slower than realign's balanced stages of at most " +
                           std::to_string(balanced) + " would price it; realign prices pp stages of " +
                           "balanced layer counts");
  return "Megatron's stages of " + split + " layers priced as " + std::to_string(pp) +
         " balanced stages of at most " + std::to_string(balanced) + " (the same largest stage)";
}

}  // namespace realign::engines
