// The stage machine: which stages the algorithm runs (SFT, reward model, RL, DPO), each checked to have its
// data, and what entering one resets (optimizers; the reference and critic copied from the actor).
#include <algorithm>

#include "core/error.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

void Trainer::build_stages() {
  const std::string& a = algorithm_;
  auto add = [&](const std::string& kind, int64_t steps) {
    if (steps <= 0) return;
    int64_t first = stages_.empty() ? 1 : stages_.back().first + stages_.back().steps;
    stages_.push_back({kind, steps, first});
  };
  if (a == "sft") {
    add("sft", train_config_.steps);
  } else if (a == "rm") {
    add("rm", train_config_.steps);
  } else if (a == "dpo") {
    add("sft", train_config_.sft_stage.steps);
    add("dpo", train_config_.steps);
  } else {
    add("sft", train_config_.sft_stage.steps);
    if (input_.sections.reward.kind == "model") {
      if (train_config_.reward_model_stage.steps <= 0 && !input_.model_dirs.count("reward"))
        throw Error("train.reward_model_stage.steps",
                    "reward.kind is model: train one here (steps > 0) or give models.reward a trained model "
                    "directory");
      add("rm", train_config_.reward_model_stage.steps);
    }
    add("rl", train_config_.steps);
  }
  if (stages_.empty()) throw Error("train.steps", "nothing to run: every stage has 0 steps");
  for (const Stage& s : stages_) {
    if ((s.kind == "sft") && data_.sft.empty())
      throw Error("data.sft", "the SFT stage needs SFT pairs (data.sft)");
    if ((s.kind == "rm" || s.kind == "dpo") && data_.preferences.empty())
      throw Error("data.preferences", "the " + s.kind + " stage needs preference pairs (data.preferences)");
    if (s.kind == "rl" && data_.prompts.empty())
      throw Error("data.prompts", "RL needs prompts (data.prompts)");
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
  auto reset_optim = [&](const std::string& role, runtime::TrainedModel& m, runtime::OptimConfig c,
                         int64_t steps) {
    const auto planned = input_.layouts.zero1.find(role);
    c.zero1 = c.zero1 || (planned != input_.layouts.zero1.end() && planned->second);
    m.config = c;
    if (m.model) m.optim = std::make_unique<runtime::AdamW>(m.model->named_params(), c, steps);
  };
  if (s.kind == "sft")
    reset_optim("actor", *actor_, algorithm_ == "sft" ? train_config_.optim : train_config_.sft_stage.optim,
                s.steps);
  if (s.kind == "rm")
    reset_optim("reward", *reward_,
                algorithm_ == "rm" ? train_config_.optim : train_config_.reward_model_stage.optim, s.steps);
  if (s.kind == "dpo") reset_optim("actor", *actor_, train_config_.optim, s.steps);
  if (s.kind == "rl") {
    reset_optim("actor", *actor_, train_config_.optim, rl_optimizer_steps());
    if (critic_) reset_optim("critic", *critic_, train_config_.critic_optim, rl_optimizer_steps());
  }
  if (!fresh) return;
  // A policy stage starts from the actor as it is now: the reference is its frozen copy, and the critic's
  // trunk starts from it too (when the shapes agree), with its own value head.
  // Each lives in its own home layout: the actor's parameters are reallocated there (collective over both
  // homes; a rank in neither takes no part).
  const ShardMap actor_held = actor_ && actor_->model ? actor_->model->named_params() : ShardMap{};
  auto from_actor = [&](const std::string& role) {
    runtime::ShardMover mover(model_params(spec("actor"), HeadKind::kLanguageModel), spec("actor").n_layers,
                              shape("actor").dtype);
    return mover.move(*all_ranks_, actor_held, place_->home("actor"), place_->home(role));
  };
  if ((s.kind == "rl" || s.kind == "dpo") && has_ref_ && spec("ref") == spec("actor") &&
      !input_.model_dirs.count("ref")) {
    const ShardMap shards = from_actor("ref");
    if (ref_) ref_->load_shards(shards, false);
  }
  if (s.kind == "rl" && critic_ && spec("critic") == spec("actor") && !input_.model_dirs.count("critic")) {
    const ShardMap trunk = from_actor("critic");  // with the actor's head, which the critic does not load
    if (critic_->model) critic_->model->load_shards(trunk, false);
  }
}

}  // namespace realign::train
