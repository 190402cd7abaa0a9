// The training loop: stages in order, one step at a time, with evaluation at stage ends, metrics, progress
// and checkpoints; and the entry points that place the calls (train/trainer.h).
#include "train/trainer.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"
#include "train/thread_budget.h"

namespace realign::train {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

TrainResult Trainer::run() {
  auto wall0 = Clock::now();
  algorithm_ = input_.algorithm.algorithm;
  const ThreadBudget threads = thread_budget(train_config_.threads, int(std::thread::hardware_concurrency()),
                                             local_workers_from_env(all_ranks_->size()));
  if (!threads.warning.empty() && all_ranks_->rank() == 0) {
    REALIGN_LOG(kWarn) << threads.warning;
  }
  at::set_num_threads(threads.threads);
  if (input_.algorithm.batch.prompts < all_ranks_->size())
    throw Error("batch.prompts", std::to_string(input_.algorithm.batch.prompts) +
                                     " prompts cannot be split over " + std::to_string(all_ranks_->size()) +
                                     " data-parallel ranks");
  data_ = load_task_data(input_.sections.data, train_config_.eval_prompts);
  build_stages();
  build_models();
  prompt_sampler_ = std::make_unique<data::EpochSampler>(std::max<int64_t>(1, int64_t(data_.prompts.size())),
                                                         mix_seed(train_config_.seed, 10, 0));
  sft_sampler_ = std::make_unique<data::EpochSampler>(std::max<int64_t>(1, int64_t(data_.sft.size())),
                                                      mix_seed(train_config_.seed, 11, 0));
  pref_sampler_ = std::make_unique<data::EpochSampler>(
      std::max<int64_t>(1, int64_t(data_.preferences.size())), mix_seed(train_config_.seed, 12, 0));

  RunDir dir{input_.run_dir};
  const int64_t total = stages_.back().first + stages_.back().steps - 1;
  int64_t done = 0;
  TrainResult result;
  result.run_dir = input_.run_dir;
  if (input_.resume) {
    done = resume_from(dir, total);
  } else {
    enter_stage(0, true);
  }
  if (is_rank0()) write_start_files(dir, done);
  all_ranks_->barrier();
  std::unique_ptr<data::JsonlWriter> metrics;
  if (is_rank0()) metrics = std::make_unique<data::JsonlWriter>(dir.metrics_file(), true);
  if (done == 0) {
    double acc = evaluate();
    result.eval_before = acc;
    if (is_rank0() && acc >= 0)
      metrics->write(Json{{"step", 0}, {"stage", stages_[0].name()}, {"eval/accuracy", acc}});
  }
  ProgressBar bar(to_string(algorithm_), total, done, stderr, stderr_is_tty(), 2.0);
  result.first_step = done + 1;
  bool rl_seen = false;
  for (int64_t step = done + 1; step <= total; ++step) {
    int stage = stage_of(step);
    if (stage != current_stage_) enter_stage(stage, true);
    const Stage& s = stages_[size_t(stage)];
    const Clock::time_point step_start = Clock::now();
    place_->begin_step();
    Json m = graph_step(step);
    double step_s = std::chrono::duration<double>(Clock::now() - step_start).count();
    const Timeline timeline = place_->gathered_timeline();
    Json rec = step_record(step, s, m, timeline, step_s);
    bool stage_end = step == s.first + s.steps - 1;
    if (stage_end || (train_config_.eval_every > 0 && step % train_config_.eval_every == 0)) {
      double acc = evaluate();
      if (acc >= 0) rec["eval/accuracy"] = acc;
      if (step == total) result.eval_after = acc;
      if (stage + 1 < int(stages_.size())) {
        const Algorithm next = stages_[size_t(stage) + 1].graph.algorithm;
        if (is_rl(next) || next == Algorithm::kDpo) result.eval_before_rl = acc;
      }
    }
    if (is_rl(s.graph.algorithm)) {
      if (!rl_seen) result.reward_first = m["reward/mean"].get<double>();
      rl_seen = true;
      result.reward_last = m["reward/mean"].get<double>();
      last_timeline_ = timeline;
    } else if (!rl_seen) {
      last_timeline_ = timeline;
    }
    if (is_rank0()) report_step(dir, step, total, rec, *metrics, bar);
    bool checkpoint =
        step == total || (train_config_.checkpoint_every > 0 && step % train_config_.checkpoint_every == 0);
    if (checkpoint) save_checkpoint(dir, step);
    result.last_step = step;
    if (input_.stop_after > 0 && step >= input_.stop_after) break;
  }
  if (input_.progress) bar.finish();
  if (is_rank0()) {
    write_text_file(dir.timeline_file(), to_json(last_timeline_).dump(2) + "\n");
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - wall0).count();
  return result;
}

TrainResult run_training(const TrainerInput& input, comm::World& world) {
  auto place = std::make_unique<runtime::CallPlacement>(
      world.global(), [&world](const Layout& layout) { return world.axis_groups(layout); }, input.layouts);
  Trainer trainer(input, std::move(place));
  return trainer.run();
}

TrainResult run_training(const TrainerInput& input, std::shared_ptr<comm::Group> world) {
  if (!input.layouts.call.empty() && world->size() > 1)
    throw Error("plan", "per-call layouts need the multi-process entry (run_training with a comm::World)");
  const std::shared_ptr<comm::Group> dp = world;
  // Only the co-located layout exists here: dp over the group, tp = pp = 1.
  auto groups = [dp](const Layout& layout) -> std::optional<comm::AxisGroups> {
    if (layout.tp != 1 || layout.pp != 1 || layout.dp != dp->size() || layout.first_device != 0)
      throw Error("plan", to_string(layout) + ": only the co-located layout runs without a comm::World");
    comm::AxisGroups g;
    g.dp = dp;
    g.tp = g.pp = comm::single_rank_group();
    return g;
  };
  auto place = std::make_unique<runtime::CallPlacement>(world, groups, runtime::CallLayouts{});
  Trainer trainer(input, std::move(place));
  return trainer.run();
}

}  // namespace realign::train
