// The training loop of `realign train`: stages (SFT to teach the format, reward-model training, then the RL
// algorithm, or SFT / RM / DPO alone), each step a sequence of model function calls (train/*_calls.h) under
// their CallContexts, with metrics, progress, evaluation, checkpoints and exact resume. Every call runs in
// the layout its plan gives it (runtime/call_placement.h): parameters are reallocated from the model's home
// layout and batch rows moved from the ranks of the calls that produced them straight to the call's ranks.
//
// Structure (for the plan executor): every stage is one algorithm's dataflow graph (graph/algorithms.h; an
// SFT stage before PPO is the SFT graph), and one engine, Trainer::graph_step() (graph_step.cc), runs every
// step of every stage: the calls graph/call_schedule.h orders for the step (with train.staleness N, the
// generation, reference and reward inference of iteration s+N, then the actor and critic inference and
// updates of iteration s), each by the one body registered for its MfcOp (call_bodies.cc), each reading the
// rows of the graph data it consumes straight from the ranks of the calls that produced them, the advantages
// (algo/) computed on the update's own ranks. Each call runs through CallPlacement in its plan layout. A
// model lives only on the ranks of its home layout (any mesh); its train call's statistics are broadcast
// from the call's first rank, so every rank (rank 0 writes metrics.jsonl) reports the same numbers.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "comm/group.h"
#include "comm/world.h"
#include "core/json.h"
#include "graph/algorithms.h"
#include "plan/layout.h"
#include "runtime/call_layouts.h"
#include "runtime/device_placement.h"
#include "train/train_config.h"

namespace realign::train {

struct TrainerInput {
  AlgorithmConfig algorithm;  // algorithm, model specs by role, batch shape
  TrainingSections sections;  // train, data, reward
  std::map<Role, std::string> model_dirs;  // role -> HF directory to load weights from; absent: from scratch
  Json raw_config;  // the merged config (written to config.yaml)
  Json plan;        // the execution plan (written to plan.json); may be null
  // The plan's layout (and micro-batches) of every call; calls it does not name run in their model's home
  // layout. Where each model lives between calls (CallLayouts::home: its train call's layout, else its first
  // call's), any mesh; a rank outside a model's home holds nothing of it. Roles absent: every rank (dp over
  // every rank). Empty: every call in the co-located layout.
  runtime::CallLayouts layouts;
  Json estimated_timeline;  // the planner's estimate of one iteration (timeline_estimated.json); may be null
  std::string run_dir;
  bool resume = false;     // continue from run_dir's latest checkpoint
  bool progress = true;    // the progress bar on stderr (rank 0)
  int64_t stop_after = 0;  // > 0: return after this step (after its checkpoint), as if interrupted there
  // This rank's device and precision (runtime::place_rank, decided once per rank by the caller); absent: the
  // CPU in train.dtype.
  std::optional<runtime::DevicePlacement> device;
};

struct TrainResult {
  std::string run_dir;
  int64_t first_step = 0, last_step = 0;  // steps this process ran (first_step > 1 after a resume)
  double eval_before = -1;                // held-out greedy accuracy at step 0 (-1: not measured)
  double eval_before_rl = -1;  // ... at the end of the stage before RL / DPO (after SFT or reward modelling)
  double eval_after = -1;      // ... after the last step
  double reward_first = 0, reward_last = 0;  // mean RL reward of the first / last RL step run (0 without RL)
  double seconds = 0;
};

// Runs the whole schedule on this rank of a multi-process run, each call in its plan layout.
TrainResult run_training(const TrainerInput& input, comm::World& world);
// The same on one process (or co-located data parallelism over `world`: input.layouts must be empty).
TrainResult run_training(const TrainerInput& input, std::shared_ptr<comm::Group> world);

}  // namespace realign::train
