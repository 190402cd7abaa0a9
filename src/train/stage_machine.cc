// The stage machine: which stages the algorithm runs (SFT, reward model, RL, DPO), each checked to have its
// data, and what entering one resets (optimizers; the reference and critic copied from the actor).
#include <algorithm>

#include "core/error.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Stage Trainer::make_stage(Algorithm algorithm, int64_t steps, int64_t draws) const {
  // The run's own algorithm has the graph the planner priced; a stage before it (SFT, the reward model) is
  // its own algorithm's graph over the same models and sequence lengths, one optimizer step per step.
  AlgorithmConfig c = with_training_sections(input_.algorithm, input_.sections);
  if (algorithm != c.algorithm) {
    c.algorithm = algorithm;
    c.staleness = 0;
    c.batch.samples_per_prompt = 1;
    c.batch.mini_batches = c.batch.epochs = 1;
  }
  c.batch.prompts = draws;
  Stage s;
  s.graph = build_graph(c);
  s.steps = steps;
  s.first = stages_.empty() ? 1 : stages_.back().first + stages_.back().steps;
  s.draws = draws;
  s.group = algorithm == Algorithm::kGrpo ? std::max<int64_t>(1, c.batch.samples_per_prompt) : 1;
  return s;
}

data::EpochSampler& Trainer::sampler_of(const Stage& stage) {
  const Algorithm a = stage.graph.algorithm;
  if (is_rl(a)) return *prompt_sampler_;
  return a == Algorithm::kSft ? *sft_sampler_ : *pref_sampler_;
}

void Trainer::build_stages() {
  const Algorithm a = algorithm_;
  const int64_t prompts = input_.algorithm.batch.prompts;
  // A stage before the algorithm's own draws its own batch (train.sft_stage.batch, ...).
  auto add = [&](Algorithm stage, int64_t steps, int64_t own_batch) {
    if (steps > 0) stages_.push_back(make_stage(stage, steps, stage == a ? prompts : own_batch));
  };
  const int64_t sft_batch = train_config_.sft_stage.batch, rm_batch = train_config_.reward_model_stage.batch;
  if (a == Algorithm::kSft || a == Algorithm::kRm) {
    add(a, train_config_.steps, prompts);
  } else if (a == Algorithm::kDpo) {
    add(Algorithm::kSft, train_config_.sft_stage.steps, sft_batch);
    add(a, train_config_.steps, prompts);
  } else {
    add(Algorithm::kSft, train_config_.sft_stage.steps, sft_batch);
    if (input_.sections.reward.kind == "model") {
      if (train_config_.reward_model_stage.steps <= 0 && !input_.model_dirs.count(Role::kReward))
        throw Error("train.reward_model_stage.steps",
                    "reward.kind is model: train one here (steps > 0) or give models.reward a trained model "
                    "directory");
      add(Algorithm::kRm, train_config_.reward_model_stage.steps, rm_batch);
    }
    add(a, train_config_.steps, prompts);
  }
  if (stages_.empty()) throw Error("train.steps", "nothing to run: every stage has 0 steps");
  for (const Stage& s : stages_) {
    const Algorithm k = s.graph.algorithm;
    if (k == Algorithm::kSft && data_.sft.empty())
      throw Error("data.sft", "the SFT stage needs SFT pairs (data.sft)");
    if ((k == Algorithm::kRm || k == Algorithm::kDpo) && data_.preferences.empty())
      throw Error("data.preferences", "the " + s.name() + " stage needs preference pairs (data.preferences)");
    if (is_rl(k) && data_.prompts.empty()) throw Error("data.prompts", "RL needs prompts (data.prompts)");
  }
}

int Trainer::stage_of(int64_t step) const {
  for (size_t i = 0; i < stages_.size(); ++i)
    if (step < stages_[i].first + stages_[i].steps) return int(i);
  return int(stages_.size()) - 1;
}

int64_t Trainer::rl_optimizer_steps() const {
  return train_config_.steps * input_.algorithm.batch.epochs *
         std::max<int64_t>(1, input_.algorithm.batch.mini_batches);
}

void Trainer::enter_stage(int index, bool fresh) {
  current_stage_ = index;
  const Stage& s = stages_[size_t(index)];
  // The plan may shard a model's Adam state over its train call's dp ranks (ZeRO-1); so may the config.
  auto reset_optim = [&](Role role, runtime::OptimConfig c, int64_t steps) {
    runtime::TrainedModel& m = trained(role);
    const auto planned = input_.layouts.zero1.find(role);
    c.zero1 = c.zero1 || (planned != input_.layouts.zero1.end() && planned->second);
    if (c.zero1 && place_->home(role).ep > 1)  // the plan never asks for it (search/candidates.h)
      throw Error("train.optim.zero1",
                  "ZeRO-1 with expert parallelism is not supported: the " + to_string(role) +
                      "'s train layout has ep = " + std::to_string(place_->home(role).ep));
    c.fp32_master = placement_.fp32_master;
    m.config = c;
    if (m.model) m.optim = std::make_unique<runtime::AdamW>(m.model->named_params(), c, steps);
  };
  const Algorithm k = s.graph.algorithm;
  if (k == Algorithm::kSft)
    reset_optim(Role::kActor, algorithm_ == k ? train_config_.optim : train_config_.sft_stage.optim, s.steps);
  if (k == Algorithm::kRm)
    reset_optim(Role::kReward, algorithm_ == k ? train_config_.optim : train_config_.reward_model_stage.optim,
                s.steps);
  if (k == Algorithm::kDpo) reset_optim(Role::kActor, train_config_.optim, s.steps);
  if (is_rl(k)) {
    reset_optim(Role::kActor, train_config_.optim, rl_optimizer_steps());
    if (trains(Role::kCritic)) reset_optim(Role::kCritic, train_config_.critic_optim, rl_optimizer_steps());
  }
  if (!fresh) return;
  // A policy stage starts from the actor as it is now: the reference is its frozen copy, and the critic's
  // trunk starts from it too (when the shapes agree), with its own value head.
  // Each lives in its own home layout: the actor's parameters are reallocated there (collective over both
  // homes; a rank in neither takes no part).
  const model::Transformer* actor = trains(Role::kActor) ? trained(Role::kActor).model.get() : nullptr;
  const ShardMap actor_held = actor ? actor->named_params() : ShardMap{};
  auto from_actor = [&](Role role) {
    runtime::ShardMover mover(model_params(spec(Role::kActor), HeadKind::kLanguageModel),
                              spec(Role::kActor).n_layers, shape(Role::kActor).dtype);
    return mover.move(*all_ranks_, actor_held, place_->home(Role::kActor), place_->home(role));
  };
  // Each copy starts from the actor unless it has a shape of its own or weights given in models.<role>.
  auto starts_from_actor = [&](Role role) {
    return spec(role) == spec(Role::kActor) && !input_.model_dirs.count(role);
  };
  if ((is_rl(k) || k == Algorithm::kDpo) && models_.frozen.count(Role::kRef) &&
      starts_from_actor(Role::kRef)) {
    const ShardMap shards = from_actor(Role::kRef);
    if (model::Transformer* ref = home_shards(Role::kRef)) ref->load_shards(shards, false);
  }
  if (is_rl(k) && trains(Role::kCritic) && starts_from_actor(Role::kCritic)) {
    // With the actor's head, which the critic does not load.
    const ShardMap trunk = from_actor(Role::kCritic);
    if (model::Transformer* critic = home_shards(Role::kCritic)) critic->load_shards(trunk, false);
  }
}

}  // namespace realign::train
