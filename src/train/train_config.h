// The training sections of a run config: `train` (steps, optimiser, PPO/GRPO/DPO knobs, sampling, stages that
// run before RL, checkpoints), `data` (the built-in addition task or JSONL files) and `reward` (verifier,
// reward model or external command). Every field has a default that works; unknown keys are errors.
#pragma once

#include <cstdint>
#include <string>

#include "core/json.h"
#include "graph/algorithms.h"
#include "runtime/optim_config.h"

namespace realign::train {

struct PpoConfig {
  double gamma = 1.0, lambda = 0.95;
  double clip_eps = 0.2;
  double value_clip = 0.2;  // <= 0 disables value clipping
  double kl_coef = 0.02;
  std::string kl_estimator = "k1";  // k1 | k2 | k3
  std::string kl_mode = "reward";   // reward (per-token penalty) | loss (added to the policy loss)
  bool adaptive_kl = false;
  double kl_target = 0.05, kl_horizon = 1000;
  double reward_clip = 0;  // clip scores to [-c, c]; <= 0 disables
  // Subtracted from the score of a response that ends without a stop token (cut at gen_len), as TRL's
  // missing_eos_penalty: a learned reward model never saw such responses and may over-score them. 0 disables.
  double missing_stop_penalty = 0;
  bool reward_norm = false;       // normalise scores over the batch
  bool whiten_advantages = true;  // PPO: GAE advantages over the batch; ReMax: r - r_greedy over the batch
  double early_stop_kl = 0;       // stop an iteration's epochs when approx KL exceeds it; <= 0 disables
  double entropy_coef = 0;
  double value_loss_coef = 1.0;
  bool grpo_scale_std = true;  // GRPO: divide by the group's std (false: Dr. GRPO centring only)
  // Where the behaviour policy's log-probs come from: "recompute" (a forward pass of the actor, actor_inf) or
  // "generation" (the sampling's own, as ReaL does: one call fewer; needs temperature 1, where the sampling
  // distribution is the policy's).
  std::string behaviour_logprobs = "recompute";
  // Staleness > 0 (decoupled PPO): the cap on the behaviour -> proximal importance weight that scales each
  // token's advantage, as AReaL's behav_imp_weight_cap; <= 0 leaves it uncapped.
  double behaviour_weight_cap = 5.0;
};

struct SamplingConfig {
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;
};

// A supervised stage before RL (SFT to teach the format; reward-model training for the preference variant).
struct StageConfig {
  int64_t steps = 0;  // 0: the stage is skipped
  int64_t batch = 32;
  runtime::OptimConfig optim;
};

struct TrainConfig {
  int64_t steps = 50;  // RL iterations (or SFT / RM / DPO steps when that is the algorithm)
  // Iteration i generates with the actor's weights after update i-1-staleness (0: synchronous). Exact: always
  // that version, so results do not depend on timing. PPO, GRPO and ReMax only.
  int64_t staleness = 0;
  // Streaming generation with partial rollouts (as AReaL and veRL's fully_async run it): priced by `realign
  // plan` (graph/generation_run.h); realign's own runtime does not interrupt samples and refuses it.
  bool partial_rollout = false;
  // With partial rollouts, the share of a batch that may be generated with the weights train.staleness
  // allows; the rest waits for one update newer (veRL fully_async's fractional staleness_threshold s:
  // staleness ceil(s), share s - ceil(s) + 1). In (0, 1]; below 1 priced by `realign plan` only.
  double staleness_share = 1;
  uint64_t seed = 1;
  int64_t threads = 0;           // intra-op threads per rank; 0 = the node's cores / its workers
  int64_t checkpoint_every = 0;  // 0 = only at the end
  int64_t eval_prompts = 64;   // greedy accuracy on held-out prompts: at step 0, stage ends, every eval_every
  int64_t eval_every = 0;      // 0 = only at step 0 and at the end of each stage
  std::string dtype = "fp32";  // fp32 | bf16: on the CPU; a GPU runs bf16 with fp32 master weights
  // auto | cpu | cuda: where each rank runs (runtime/device_placement.h: auto puts a GPU cluster on
  // cuda:LOCAL_RANK where CUDA is there, on the CPU with a note where it is not; cuda without a GPU is an
  // error)
  std::string device = "auto";
  runtime::OptimConfig optim;
  runtime::OptimConfig critic_optim;
  PpoConfig ppo;
  SamplingConfig sampling;
  double dpo_beta = 0.1, dpo_label_smoothing = 0;
  StageConfig sft_stage;           // before RL
  StageConfig reward_model_stage;  // before RL, when reward.kind is model
};

struct DataConfig {
  std::string task = "addition";  // addition | files
  int min_digits = 1, max_digits = 2;
  uint64_t task_seed = 0;
  std::string prompts_file, sft_file, preferences_file;  // task: files
  std::string chat_template;  // a model dir or tokenizer_config.json: renders {"messages": [...]} records
};

struct RewardConfig {
  std::string kind = "verifier";  // verifier | model | command
  bool partial_credit = false;    // verifier: half credit for partly right digits
  std::string command;            // kind command
  double timeout_s = 300;
};

struct TrainingSections {
  TrainConfig train;
  DataConfig data;
  RewardConfig reward;
};

// Reads `train`, `data` and `reward` from the root (each optional). Errors name the field. Without a
// reference model (`models.ref: none`) the KL coefficient is 0 and a KL setting is an error.
TrainingSections training_sections_from_json(ObjectReader& root, bool reference = true);

// The algorithm as the training sections run it, which decides the graph's calls: a reward model's call only
// when reward.kind is model, actor_inf for the behaviour log-probs unless the sampling gives them, and the
// staleness (refused, naming train.staleness, for algorithms without generation).
AlgorithmConfig with_training_sections(AlgorithmConfig algorithm, const TrainingSections& sections);

}  // namespace realign::train
