// The workloads of ReaL's published PPO throughput figure (LLaMA-2 7B to 70B, 8 to 128 H100, prompt 128,
// generation 128/384/896 with 512/256/128 prompts, 4 mini-batches) as realign run configs, the one-layout
// plan classes the heuristic bars are compared with, and a line through a model pair's points.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/run_config.h"
#include "cost/hardware_profile.h"
#include "plan/execution_plan.h"
#include "search/plan_evaluator.h"

namespace realign::paper_workloads {

struct Point {
  std::string row;  // "scale actor", "scale critic", "scale both"
  std::string actor, critic;
  int gpus = 8;
  int prompts = 512, gen_len = 128;
  double heuristic_s = 0, real_s = 0;  // published; 0 where held out or not published
};

// "llama2-7b" -> "7b".
std::string short_name(const std::string& model);

// The published points of `file` (data/published's format, one row of the figure); empty when it cannot
// be read.
std::vector<Point> published_points(const std::string& file);

// The figure's grid: gen 128/384/896 with 512/256/128 prompts for every model pair.
std::vector<Point> grid(const std::vector<Point>& published);

// A point as a run config: examples/ppo_llama2_7b_16xh100.yaml with the point's models, batch and cluster,
// the search's time budget and, unless empty, a profile file.
apps::RunConfig config_of(const Point& p, const std::string& root, const std::string& budget,
                          const std::string& profile);

// ReaLHF's `pipe_model` allocation (realhf/experiments/common/common.py: "identical parallelization (like
// DSChat) with pipe+model parallelism", its default allocation_mode): every call on every GPU with tp = the
// GPUs of a node, pp = the nodes, dp = 1; train calls recompute activations, as ReaLHF does by default and as
// the figure's FLOPs count them (one_layout_plan). The heuristic bars' plan: among one-layout plans it
// explains them best (`--fit` fits both it and the co-located preset and prints their errors).
std::optional<ExecutionPlan> pipe_model_plan(const apps::RunConfig& config, PlanEvaluator& ev);

using PlanClass = std::optional<ExecutionPlan> (*)(const apps::RunConfig&, PlanEvaluator&);

// realign's co-located preset.
std::optional<ExecutionPlan> co_located_plan(const apps::RunConfig& config, PlanEvaluator& ev);

// The estimate of every point's plan of class `make` under `profile` (1e9 where it does not fit).
std::vector<double> class_estimates(const std::vector<apps::RunConfig>& configs,
                                    const HardwareProfile& profile, PlanClass make);

// A least-squares line time = fixed + per_step * gen_len through one model pair's points: the three
// generation lengths carry the same tokens per batch (prompts x (128 + gen) = 131,072), so the training and
// inference passes cost about the same at every length and the slope is the cost of one decoding step of
// the whole batch. The published bars decompose this way to within a few percent.
struct Line {
  double fixed_s = 0, per_step_s = 0;
};

Line line_through(const std::vector<double>& gen_len, const std::vector<double>& time_s);

// The points of one model pair (same row, models and GPUs), in the order given.
std::vector<std::vector<size_t>> pairs_of(const std::vector<Point>& points);

}  // namespace realign::paper_workloads
