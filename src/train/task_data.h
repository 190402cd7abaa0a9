// The data a training run draws from, built from the `data` section: the built-in addition task (train and
// held-out prompts, SFT pairs, preference pairs labelled by its hidden rule) or JSONL files; and rule-based
// rewards (the task's verifier or an external command) over decoded responses.
#pragma once

#include <string>
#include <vector>

#include "data/datasets.h"
#include "train/train_config.h"

namespace realign::train {

struct TaskData {
  std::vector<data::PromptRecord> prompts;       // RL prompts
  std::vector<data::PromptRecord> eval_prompts;  // held out, with answers (empty when there are none)
  std::vector<data::SftRecord> sft;
  std::vector<data::PreferenceRecord> preferences;
};

// `eval_n` held-out prompts (the addition task draws them from a disjoint offset; files hold out none).
TaskData load_task_data(const DataConfig& config, int64_t eval_n);

// Rule-based scores of responses (text): the addition verifier against each prompt's answer, or the reward
// command. Throws Error when the verifier has no answers to check against or the command fails.
std::vector<double> rule_rewards(const RewardConfig& config, const std::vector<data::PromptRecord>& prompts,
                                 const std::vector<std::string>& responses);

}  // namespace realign::train
