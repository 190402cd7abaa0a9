// The three kinds of training data: prompts (RL), prompt/response pairs (SFT) and preference pairs (DPO, reward
// modelling), read from JSONL with every field checked.
#pragma once

#include <string>
#include <vector>

namespace realign::data {

struct PromptRecord {
  std::string prompt;
  std::string answer;  // optional reference answer for rule-based rewards; empty when absent
};

struct SftRecord {
  std::string prompt;
  std::string response;
};

struct PreferenceRecord {
  std::string prompt;
  std::string chosen;
  std::string rejected;
};

// Lines like {"prompt": "...", "answer": "..."}; other keys are errors naming file:line and the key.
std::vector<PromptRecord> load_prompts(const std::string& path);
std::vector<SftRecord> load_sft_pairs(const std::string& path);
std::vector<PreferenceRecord> load_preference_pairs(const std::string& path);

}  // namespace realign::data
