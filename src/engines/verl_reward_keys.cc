#include "engines/verl_reward_keys.h"

#include "engines/script_reader.h"

namespace realign::engines {

namespace {

constexpr const char* kServed = "reward.reward_model.";
constexpr const char* kActorMegatron = "actor_rollout_ref.actor.megatron.";

}  // namespace

ReaderLaunch as_reader_reward_keys(HydraLaunch launch) {
  ReaderLaunch out;
  const LaunchSettings s(launch.entries);
  const std::string served = kServed;
  if (!s.flag(served + "enable", false)) {
    out.launch = std::move(launch);
    return out;
  }
  std::vector<ConfigEntry> entries;
  for (ConfigEntry& e : launch.entries)
    if (e.key.compare(0, served.size(), served) != 0) entries.push_back(std::move(e));
  auto put = [&](const std::string& reader_key, Json value, const std::string& users) {
    entries.push_back({reader_key, std::move(value)});
    out.user_names[reader_key] = users;
  };
  put("reward_model.enable", true, served + "enable");
  if (s.has(served + "model_path"))
    put("reward_model.model.path", s.text(served + "model_path", ""), served + "model_path");
  // One server step prefills max_num_batched_tokens (vLLM's chunked prefill): a token budget per GPU's
  // micro-batch, as the worker's dynamic batching reads one.
  const std::string budget = served + "rollout.max_num_batched_tokens";
  put("reward_model.use_dynamic_bsz", true, budget);
  put("reward_model.forward_max_token_len_per_gpu", s.integer(budget, 8192), budget);
  for (const char* leaf : {"tensor_model_parallel_size", "pipeline_model_parallel_size"}) {
    const int64_t actor = s.integer(kActorMegatron + std::string(leaf), 1);
    const std::string server = served + "rollout." + leaf;
    put("reward_model.megatron." + std::string(leaf), actor, server);
    if (s.has(server) && s.integer(server, actor) != actor)
      launch.notes.push_back(server + ": " + std::to_string(s.integer(server, actor)) +
                             " priced as the actor's " + std::to_string(actor) +
                             " (realign runs the reward model in the actor's layout)");
  }
  launch.entries = std::move(entries);
  out.launch = std::move(launch);
  return out;
}

}  // namespace realign::engines
