// The dataflow graphs of the RLHF algorithms (PPO, GRPO, ReMax, DPO, SFT, reward modelling), built from the
// `algorithm`, `models` and `batch` sections of a config.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "graph/dataflow_graph.h"

namespace realign {

struct BatchShape {
  int64_t prompts = 0;             // prompts (or SFT sequences / preference pairs) per iteration
  int64_t prompt_len = 0;          // tokens per prompt
  int64_t gen_len = 0;             // generated (or response) tokens per sequence: the mean
  int64_t samples_per_prompt = 1;  // GRPO group size
  int64_t mini_batches = 1;        // optimizer steps per epoch
  int64_t epochs = 1;              // passes over the iteration's batch (PPO epochs)
  int64_t gen_len_max = 0;         // the cap (max_new_tokens); gen_len unless set
  LengthDistribution gen_lengths{};  // the response lengths under the cap (fixed at gen_len unless set)
  int64_t cap() const { return gen_len_max > 0 ? gen_len_max : gen_len; }
};

struct AlgorithmConfig {
  Algorithm algorithm = Algorithm::kPpo;
  std::map<Role, ModelSpec> models;  // role -> architecture
  BatchShape batch;
  // RL rewards come from a reward model's inference call; false when a rule scores the responses (a
  // verifier or an external command, run on the batch's ranks outside any model call).
  bool reward_model = true;
  // The behaviour policy's log-probs (PPO's ratio, the KL to the reference) come from a forward pass of the
  // actor over the generated sequences (actor_inf, as veRL and OpenRLHF do), or, when false, from the
  // sampling itself (ReaL's PPO): one call fewer, the generation's outputs carry them.
  bool recompute_logprobs = true;
  // The reference policy's log-probs (ref_inf) for a KL term. False (`models.ref: none`) where the objective
  // has none (DAPO, Dr. GRPO, AReaL's and veRL's GRPO without KL): no reference model is held and no call
  // runs; the KL coefficient must then be 0.
  bool reference = true;
  // train.staleness: iteration i generates with the actor's weights after update i-1-staleness. With
  // staleness > 0 the generation gives the behaviour log-probs ("logprobs") and actor_inf the proximal
  // policy's ("prox_logprobs", the current weights) for the decoupled objective.
  int64_t staleness = 0;
  // How generation runs its samples (graph/generation_run.h): realign's runtime batches statically, a
  // serving engine continuously; partial rollouts only with staleness > 0.
  Batching batching = Batching::kStatic;
  bool partial_rollout = false;
  double staleness_share = 1;  // DataflowGraph::staleness_share
};

// models.ref's value for no reference model (AlgorithmConfig::reference false).
inline constexpr const char* kNoReference = "none";

// The algorithms' names, sorted (for messages).
std::vector<std::string> algorithm_names();
// The model roles an algorithm uses.
std::vector<Role> algorithm_roles(Algorithm algorithm);

// Reads `algorithm`, `models` and `batch` from the root config (marking them as known keys).
// models.<role> is a built-in name ("llama2-7b") or the path of an HF config.json or of a directory holding
// one. Missing roles default sensibly (ref = actor, reward = critic or actor, critic = actor); `ref: none`
// for an RL algorithm without a KL term.
AlgorithmConfig algorithm_config_from_json(ObjectReader& root);

// Resolves "llama2-7b" or "path/to/config.json" or "path/to/model_dir".
ModelSpec resolve_model_spec(const std::string& source, const std::string& path);

// PPO-family graphs: actor_gen -> (ref_inf unless there is no reference, reward_inf, actor_inf for the
// behaviour log-probs unless the generation gives them, critic_inf) -> actor_train (+ critic_train). Without
// a reward model, "rewards" is batch data no call produces.
DataflowGraph build_graph(const AlgorithmConfig& config);

}  // namespace realign
