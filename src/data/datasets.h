// The three kinds of training data: prompts (RL), prompt/response pairs (SFT) and preference pairs (DPO,
// reward modelling), read from JSONL with every field checked.
#pragma once

#include <string>
#include <vector>

#include "data/conversations.h"

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
// Conversations may replace the prompt, rendered with `render` (the model's chat template):
//   prompts:     {"messages": [...], "answer"?: ...}           the prompt ends with the generation prompt
//   SFT:         {"messages": [..., {"role": "assistant", "content": response}]}
//   preferences: {"messages": [...], "chosen": "...", "rejected": "..."}  (answers as assistant turns)
std::vector<PromptRecord> load_prompts(const std::string& path, const RenderConversation& render = {});
std::vector<SftRecord> load_sft_pairs(const std::string& path, const RenderConversation& render = {});
std::vector<PreferenceRecord> load_preference_pairs(const std::string& path,
                                                    const RenderConversation& render = {});

}  // namespace realign::data
