// DataflowGraph: the model function calls (MFCs) of one RLHF iteration, the models they run on, and the batch
// data flowing between them. A call depends on another when it consumes data the other produces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/algorithm.h"
#include "graph/model_spec.h"
#include "graph/param_layout.h"
#include "graph/generation_run.h"
#include "graph/role.h"

namespace realign {

// How the planner prices a call: decoding, one forward pass, or forward, backward and optimizer steps.
enum class MfcKind { kGenerate, kInference, kTrain };
std::string to_string(MfcKind kind);

// What a call computes. The runtime has one body per op (train/call_bodies.h); the planner prices a call by
// its op's kind.
enum class MfcOp {
  kSample,           // responses to the iteration's prompts (greedy when Mfc::greedy)
  kTokenLogProbs,    // per-token log-probs of the responses
  kTokenValues,      // per-token values of the responses (a critic)
  kSequenceScores,   // one score per response (a reward model)
  kPairLogProbs,     // summed log-probs of each preference pair's chosen and rejected responses
  kPolicyUpdate,     // the PPO-family policy loss (PPO, GRPO, ReMax)
  kValueUpdate,      // the clipped value loss (a critic)
  kSftUpdate,        // next-token loss on prompt/response pairs
  kPairScoreUpdate,  // Bradley-Terry loss on preference pairs (a reward model)
  kDpoUpdate,        // the DPO loss on preference pairs
};
std::string to_string(MfcOp op);
MfcKind kind_of(MfcOp op);
// The update's loss compares the rows of two batches (chosen and rejected).
bool is_pair_loss(MfcOp op);

// A model as the algorithm uses it: its role with its architecture.
struct ModelRole {
  Role role = Role::kActor;
  ModelSpec spec;
  HeadKind head = HeadKind::kLanguageModel;
  bool trained = false;  // owns parameters + optimizer state in its train call's layout
  bool operator==(const ModelRole& o) const {
    return role == o.role && spec == o.spec && head == o.head && trained == o.trained;
  }
};

// A named piece of per-sequence batch data ("seq", "logprobs", ...), with its size for data-move costs.
struct DataSpec {
  std::string name;
  double bytes_per_seq = 0;
  bool operator==(const DataSpec& o) const { return name == o.name && bytes_per_seq == o.bytes_per_seq; }
};

struct Mfc {
  std::string name;   // "actor_gen"
  Role model = Role::kActor;  // the ModelRole it runs on
  MfcOp op = MfcOp::kTokenLogProbs;
  int64_t n_seqs = 0;      // sequences per iteration
  int64_t prompt_len = 0;  // tokens per prompt
  int64_t gen_len = 0;     // generated tokens per sequence (generate: decoded; others: part of the sequence)
  int64_t mini_batches = 1;  // train: optimizer steps per pass over the batch (each on a segment of it)
  int64_t epochs = 1;        // train: passes over the batch (PPO epochs)
  bool greedy = false;       // generate: greedy decoding (ReMax's baseline)
  GenerationRun generation;  // generate: the response lengths (mean gen_len) and how they are generated
  std::vector<std::string> inputs;   // DataSpec names consumed
  std::vector<std::string> outputs;  // DataSpec names produced
  MfcKind kind() const { return kind_of(op); }
  bool pair_loss() const { return is_pair_loss(op); }
  int64_t seq_len() const { return prompt_len + gen_len; }
  // generate: the cap on a response (the runtime's max_new_tokens); gen_len where no lengths are given.
  int64_t max_new_tokens() const {
    return generation.lengths.quantiles.empty() ? gen_len : generation.lengths.cap;
  }
  // Optimizer steps per iteration (train; 1 otherwise) and the sequences of the largest and of the smallest
  // step (the whole batch for other calls).
  int64_t train_steps() const { return kind() == MfcKind::kTrain ? mini_batches * epochs : 1; }
  int64_t max_seqs_per_step() const;
  int64_t min_seqs_per_step() const;
  // The sequences one pass of the call takes: an optimizer step's for a train call, the whole batch's
  // otherwise (what a rank's micro-batches split, over dp).
  int64_t seqs_per_pass() const { return kind() == MfcKind::kTrain ? min_seqs_per_step() : n_seqs; }
  bool operator==(const Mfc& o) const;
};

struct DataflowGraph {
  Algorithm algorithm = Algorithm::kPpo;
  // Iteration i's generation uses the actor's weights after update i-1-staleness (0: synchronous).
  int64_t staleness = 0;
  // With partial rollouts, the share of a batch the generation may produce with those weights; the rest
  // waits for the weights one update newer (veRL fully_async's fractional staleness_threshold s: staleness
  // ceil(s), share s - ceil(s) + 1). 1: whole iterations. Priced only (call_schedule.h, the simulator).
  double staleness_share = 1;
  std::vector<ModelRole> models;
  std::vector<Mfc> mfcs;  // in a topological order
  std::vector<DataSpec> data;

  const ModelRole& model(Role role) const;                // CHECKs existence
  bool has_model(Role role) const;
  int mfc_index(const std::string& name) const;           // -1 when absent
  const DataSpec& data_spec(const std::string& name) const;
  // Indices of the calls whose outputs `mfc` consumes.
  std::vector<int> parents(int mfc) const;
  // The train call of a trained model, or -1.
  int train_call(Role model) const;
  // The call whose layout is `model`'s home, where its parameters live between calls: its train call (with
  // the optimizer state), else its first call in graph order; -1 when no call uses it. The simulator and the
  // runtime both place models by this rule, so estimated and measured memory and moves agree.
  int home_call(Role model) const;
  bool operator==(const DataflowGraph& o) const;
};

// Checks names are unique, every input is produced earlier (or is "prompts"), models exist.
void validate_graph(const DataflowGraph& graph);

Json to_json(const DataflowGraph& graph);

}  // namespace realign
