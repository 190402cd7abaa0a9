// The trainer behind run_training (train/trainer.h), one class whose members live in one file per concern:
// model setup, the stage machine, each algorithm's step, evaluation, checkpoint/resume and run outputs; the
// loop that drives them is trainer.cc. Internal to train/.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algo/kl.h"
#include "core/json.h"
#include "cost/simulation_result.h"
#include "data/epoch_sampler.h"
#include "data/jsonl.h"
#include "graph/call_schedule.h"
#include "runtime/call_placement.h"
#include "runtime/json_broadcast.h"
#include "runtime/trained_model.h"
#include "train/detail/full_checkpoint_slots.h"
#include "train/generate_call.h"
#include "train/progress_bar.h"
#include "train/run_dir.h"
#include "train/task_data.h"
#include "train/text_codec.h"
#include "train/train_calls.h"
#include "train/trainer.h"

namespace realign::train {

// One stage of a run (an SFT stage, then PPO, ...): its algorithm's dataflow graph, whose calls every step
// runs, and the rows a step draws from the stage's data.
struct Stage {
  DataflowGraph graph;
  int64_t steps = 0;
  int64_t first = 1;  // its first global step
  int64_t draws = 0;  // records (prompts, SFT examples or preference pairs) a step draws
  int64_t group = 1;  // rows per record (GRPO's samples per prompt)
  std::string name() const { return stage_name(graph.algorithm); }
};

// The placement of a run given none: the CPU in train.dtype.
inline runtime::DevicePlacement cpu_placement(const std::string& dtype) {
  runtime::DevicePlacement p;
  p.dtype = dtype;
  return p;
}

class Trainer {
 public:
  Trainer(const TrainerInput& in, std::unique_ptr<runtime::CallPlacement> place)
      : input_(in),
        train_config_(in.sections.train),
        placement_(in.device ? *in.device : cpu_placement(in.sections.train.dtype)),
        place_(std::move(place)),
        all_ranks_(place_->global_ptr()),
        codec_(TextCodec::bytes()) {}

  // The whole schedule: every stage's steps, with evaluation, checkpoints and outputs (trainer.cc).
  TrainResult run();

 private:
  // Rank 0 of every rank writes the run's files.
  bool is_rank0() const { return all_ranks_->rank() == 0; }
  int rank() const { return all_ranks_->rank(); }
  // The rows of an n-row batch that this rank handles in `call`'s layout, as one contiguous range (its dp
  // group's share); empty outside the layout. segmented_rows is the same split per segment (mini-batch).
  Range contiguous_rows(const std::string& call, Role role, int64_t n) const {
    return samples_of(n, place_->layout_of(call, role), rank());
  }
  const ModelSpec& spec(Role role) const;
  runtime::ModelShape shape(Role role) const;
  // This rank's shards of `role`'s model in its home layout; null on a rank outside the home.
  model::Transformer* home_shards(Role role) const;
  // A trained role's model and optimizer (CHECKs the algorithm trains it).
  runtime::TrainedModel& trained(Role role) const;
  bool trains(Role role) const { return models_.trained.count(role) > 0; }
  using CallBody = runtime::CallPlacement::CallBody;
  // One call of `role`'s model in the call's plan layout (CallPlacement::run_call); `body` runs on its ranks.
  void run_call(const std::string& call, Role role, const CallBody& body) {
    place_->run_call(call, role, shape(role), home_shards(role), body);
  }
  // (call, role, body) of calls that do not depend on each other, run together (CallPlacement::run_calls).
  struct Call {
    std::string call;
    Role role;
    CallBody body;
  };
  void run_together(const std::vector<Call>& calls) {
    std::vector<runtime::CallPlacement::CallRun> runs;
    for (const Call& c : calls)
      runs.push_back(
          {c.call, c.role, place_->layout_of(c.call, c.role), shape(c.role), home_shards(c.role), c.body});
    place_->run_calls(runs);
  }
  // A call's statistics (set on its ranks) on every rank, broadcast from the call's first rank.
  Json broadcast_call_stats(const std::string& call, Role role, const Json& stats) {
    return runtime::broadcast_json(*all_ranks_, stats, place_->layout_of(call, role).first_device);
  }
  // `role`'s model, initialised from its seed or loaded from models.<role>; null on a rank outside its home
  // layout.
  std::unique_ptr<model::Transformer> make_model(Role role);
  // Model setup (trainer_models.cc).
  void build_models();
  std::vector<PlacedSlot> placed_slots();

  // The stage machine (stage_machine.cc): the stages the algorithm runs, each checked to have its data, and
  // what entering one resets.
  void build_stages();
  Stage make_stage(Algorithm algorithm, int64_t steps, int64_t draws) const;
  // The sampler of the records a stage's steps draw: prompts, SFT examples or preference pairs.
  data::EpochSampler& sampler_of(const Stage& stage);
  int stage_of(int64_t step) const;
  void enter_stage(int index, bool fresh);
  int64_t rl_optimizer_steps() const;

  // Checkpoint and resume (trainer_checkpoint.cc). resume_from enters the stage of the latest checkpoint in
  // `dir` and restores it (models, optimizers, samplers, KL coefficient), or enters the first stage when
  // there is none; returns the steps already done. save_checkpoint is collective over every rank.
  int64_t resume_from(const RunDir& dir, int64_t total);
  void save_checkpoint(const RunDir& dir, int64_t step);
  Json loop_state() const;
  void restore_loop_state(const Json& s);
  // The RL iterations in flight (train.staleness > 0): their rows brought whole to rank 0 (collective;
  // the tensors on rank 0, keyed iteration/call/field) and what they belong to in `meta`; and back from a
  // checkpoint to the ranks of the calls that produced them in this run's plan.
  std::map<std::string, at::Tensor> gather_in_flight(Json* meta);
  void restore_in_flight(const Json& meta, const std::map<std::string, at::Tensor>& rows);

  // Run outputs (run_outputs.cc): the files a run starts with (rank 0), one step's metrics record, and
  // its metrics line, progress file and progress bar (rank 0).
  void write_start_files(const RunDir& dir, int64_t done) const;
  Json step_record(int64_t step, const Stage& stage, const Json& step_stats, const Timeline& timeline,
                   double step_s) const;
  void report_step(const RunDir& dir, int64_t step, int64_t total, const Json& rec,
                   data::JsonlWriter& metrics, ProgressBar& bar) const;

  // One iteration's rows: row i is record idx[i / group] of the stage's data (a prompt, an SFT example or a
  // preference pair); every rank can build any row.
  struct BatchRows {
    std::vector<int64_t> idx;
    int64_t group = 1, n = 0;
  };
  // Row i's prompt record, in an RL stage (whose records are data_.prompts).
  const data::PromptRecord& record_of(const BatchRows& rows, int64_t i) const {
    return data_.prompts[size_t(rows.idx[size_t(i / rows.group)])];
  }
  std::vector<runtime::TokenIds> prompts_of(const BatchRows& rows, const std::vector<int64_t>& index) const;
  // The sample indices of this rank's rows in a call's layout: its dp group's shares of `segments` segments,
  // in order (realloc/data_plan.h segment_shares); empty outside the layout.
  std::vector<int64_t> segmented_rows(const std::string& call, Role role, int64_t n, int64_t segments) const;
  // Scores less train.ppo.missing_stop_penalty for each response cut at gen_len (no stop token at its end).
  at::Tensor stop_penalised(const at::Tensor& scores, const std::vector<runtime::TokenIds>& responses) const;

  // The rows one call produced, on this rank: they stay on the call's ranks (empty elsewhere) until they move
  // straight to the calls that need them (bring_inputs).
  struct Produced {
    std::string call;
    Layout layout;
    runtime::Rows rows;
  };
  // A consumer call and what it reads: some fields of some producers' rows, in `segments` segments.
  struct Input {
    const Produced* from;
    std::vector<std::string> fields;  // those the producer lacks are skipped
  };
  struct Consumer {
    std::string call;
    Role role;
    std::vector<Input> inputs;
    int64_t segments = 1;
  };
  // Every consumer's inputs moved from their producers' layouts in one exchange (CallPlacement::move_rows):
  // per consumer, its rows with the fields of all its inputs (empty outside its layout).
  std::vector<runtime::Rows> bring_inputs(int64_t n, const std::vector<Consumer>& consumers);

  // One iteration of a stage's graph from its first call to its updates: its rows, the actor weight version
  // its calls read first, the global step whose seed its sampling takes, and the rows each of its calls
  // produced so far (on that call's ranks). With train.staleness N, up to N + 1 are in flight at once.
  struct Iteration {
    BatchRows rows;
    int64_t weight_version = 0;
    int64_t seed_step = 0;
    std::map<std::string, Produced> produced;  // by call name
  };

  // One step of the current stage (graph_step.cc): the calls graph/call_schedule.h orders for it, each run
  // by its op's body in its plan layout, each call's inputs moved straight from the ranks of the calls of its
  // iteration that produced them. The same engine runs every algorithm.
  Json graph_step(int64_t step);
  // What call instance `c` of `graph` reads from the producers `from` accepts: the row fields of the graph
  // data it consumes, from the calls of its iteration that produced them (call_bodies.cc).
  Consumer consumer_of(const DataflowGraph& graph, const CallInstance& c,
                       const std::function<bool(const CallInstance&)>& from) const;

  // The call bodies, one per MfcOp (call_bodies.cc registers them). Each is built from the call's node, its
  // iteration, the rows moved to it and where its statistics go (train calls: on the call's ranks).
  struct BodyInput {
    const Mfc& m;
    Iteration& it;
    const runtime::Rows& in;
    Json* stats;
  };
  using BodyMaker = Call (Trainer::*)(const BodyInput&);
  struct RegisteredBody {
    BodyMaker make;
    bool segmented;  // its rows come as the shares of mini-batch segments (segmented_rows)
  };
  static const RegisteredBody& body_of(MfcOp op);
  // The row fields an inference call writes its one output as (the first field a train call reads of it).
  static std::vector<std::string> output_fields(const Mfc& m);
  // sample_body.cc: responses sampled with the seed of the iteration's step; without a reward model scored
  // by the rule on the call's ranks (stop penalty included): "score", or "base_score" for ReMax's greedy
  // baseline.
  Call sample_body(const BodyInput& b);
  // inference_bodies.cc: an output field written on the call's ranks. response_forward_body: the body of
  // a forward pass over the iteration's responses, `forward` (ctx, model, batch, responses) -> the field.
  using ResponseForward =
      std::function<at::Tensor(const runtime::CallContext&, model::Transformer&,
                               const runtime::SequenceBatch&, const std::vector<runtime::TokenIds>&)>;
  Call response_forward_body(const BodyInput& b, ResponseForward forward);
  Call token_logprobs_body(const BodyInput& b);
  Call token_values_body(const BodyInput& b);
  Call sequence_scores_body(const BodyInput& b);
  Call pair_logprobs_body(const BodyInput& b);
  // rl_update_bodies.cc: the PPO-family updates on the batch rl_batch computes.
  Call policy_update_body(const BodyInput& b);
  Call value_update_body(const BodyInput& b);
  // dataset_update_bodies.cc: the updates on dataset rows (SFT examples, preference pairs).
  Call sft_update_body(const BodyInput& b);
  Call pair_score_update_body(const BodyInput& b);
  Call dpo_update_body(const BodyInput& b);

  // A train call's PpoBatch from the rows it received (`index`: their sample indices): advantages and the
  // like computed on the call's ranks over the whole batch (rl_batch.cc); `stats` (when given): the step's
  // batch statistics.
  PpoBatch rl_batch(const runtime::CallContext& ctx, const BatchRows& rows, const runtime::Rows& got,
                    const std::vector<int64_t>& index, double kl_coef, Json* stats) const;
  // The preference pairs of `rows` this rank handles in `m`'s layout, as (prompt + chosen, prompt +
  // rejected).
  struct PreferenceBatches {
    runtime::SequenceBatch chosen, rejected;
  };
  PreferenceBatches preference_batches(const Mfc& m, const BatchRows& rows) const;
  // Held-out greedy accuracy of the actor (evaluation.cc); -1 without an actor or held-out prompts.
  double evaluate();

  TrainerInput input_;
  const TrainConfig& train_config_;  // input_.sections.train
  const runtime::DevicePlacement placement_;  // every model's device and dtype on this rank
  std::unique_ptr<runtime::CallPlacement> place_;
  std::shared_ptr<comm::Group> all_ranks_;  // the group of every rank of the run (place_->global_ptr())
  TextCodec codec_;
  TaskData data_;
  std::vector<Stage> stages_;
  int current_stage_ = -1;
  Algorithm algorithm_ = Algorithm::kPpo;

  // The models the algorithm uses, by role. An entry is present on every rank when the algorithm uses the
  // model; the Transformer (and optimizer) inside only on the ranks of its home layout.
  struct Models {
    std::map<Role, std::unique_ptr<runtime::TrainedModel>> trained;  // actor, critic, reward
    std::map<Role, std::unique_ptr<model::Transformer>> frozen;      // the reference; null outside its home
  } models_;
  std::unique_ptr<data::EpochSampler> prompt_sampler_, sft_sampler_, pref_sampler_;
  std::unique_ptr<algo::AdaptiveKlController> kl_ctl_;
  std::map<int64_t, Iteration> iterations_;  // the current stage's iterations begun and not done, by number

  Timeline last_timeline_;
};

}  // namespace realign::train
