#include "train/task_data.h"

#include "core/error.h"
#include "core/utf8.h"
#include "data/addition_task.h"
#include "data/reward_command.h"
#include "jinja/chat_template.h"

namespace realign::train {
namespace {

// Sampled bytes need not be UTF-8; the command reads JSON, so invalid bytes become U+FFFD.
std::string to_valid_utf8(const std::string& s) {
  std::string out;
  std::string_view rest(s);
  while (!rest.empty()) {
    std::optional<size_t> bad = find_invalid_utf8(rest);
    if (!bad) {
      out += rest;
      break;
    }
    out += rest.substr(0, *bad);
    append_utf8(out, 0xFFFD);
    rest.remove_prefix(*bad + 1);
  }
  return out;
}

}  // namespace

TaskData load_task_data(const DataConfig& c, int64_t eval_n) {
  TaskData d;
  if (c.task == "addition") {
    data::AdditionTask task{c.min_digits, c.max_digits, c.task_seed};
    // Offsets keep train, held-out and preference draws apart.
    d.prompts = task.prompts(4096, 0);
    d.sft = task.sft_pairs(4096, 1 << 20);
    d.preferences = task.preference_pairs(4096, 2 << 20);
    d.eval_prompts = task.prompts(eval_n, 3 << 20);
    return d;
  }
  data::RenderConversation render;
  if (!c.chat_template.empty()) render = jinja::chat_template_renderer(c.chat_template);
  if (!c.prompts_file.empty()) d.prompts = data::load_prompts(c.prompts_file, render);
  if (!c.sft_file.empty()) d.sft = data::load_sft_pairs(c.sft_file, render);
  if (!c.preferences_file.empty()) d.preferences = data::load_preference_pairs(c.preferences_file, render);
  return d;
}

std::vector<double> rule_rewards(const RewardConfig& c, const std::vector<data::PromptRecord>& prompts,
                                 const std::vector<std::string>& responses) {
  std::vector<double> out;
  if (c.kind == "command") {
    std::vector<data::RewardSample> samples;
    for (size_t i = 0; i < prompts.size(); ++i)
      samples.push_back({prompts[i].prompt, to_valid_utf8(responses[i]), prompts[i].answer});
    return data::run_reward_command(c.command, samples, c.timeout_s);
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].answer.empty())
      throw Error("reward.kind", "the verifier needs an \"answer\" for every prompt (prompt '" +
                                     prompts[i].prompt + "' has none); use reward.kind: command or model");
    out.push_back(data::addition_reward(responses[i], prompts[i].answer, c.partial_credit));
  }
  return out;
}

}  // namespace realign::train
