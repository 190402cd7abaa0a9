#include "engines/verl_reward_keys.h"

#include <algorithm>

#include "engines/script_reader.h"

namespace realign::engines {

namespace {

constexpr const char* kServed = "reward.reward_model.";
constexpr const char* kActorMegatron = "actor_rollout_ref.actor.megatron.";

}  // namespace

ReaderLaunch as_reader_reward_keys(HydraLaunch launch) {
  ReaderLaunch out;
  const LaunchSettings s(launch.entries);
  // v0.7.1 on: reward.reward_model.*. v0.7.0 and v0.8's development line keep the reward model under
  // reward_model.* and serve it by the reward loop as well, reward_model.use_reward_loop defaulting to true
  // (_generated_ppo_trainer.yaml), its server's sizes under reward_model.rollout.*; use_reward_loop=False is
  // the Megatron or FSDP worker the reader reads. Left out, a launch setting the server's keys runs the loop;
  // one setting none is read as the worker, noted.
  std::string served = kServed;
  std::string path_key = served + "model_path";
  if (!s.flag(served + "enable", false)) {
    const std::string loop_key = "reward_model.use_reward_loop";
    bool server_keys = false;
    for (const ConfigEntry& e : launch.entries)
      server_keys = server_keys || e.key.rfind("reward_model.rollout.", 0) == 0;
    const bool loop = s.flag(loop_key, server_keys);
    if (!s.flag("reward_model.enable", false) || !loop) {
      if (s.flag("reward_model.enable", false) && !s.has(loop_key))
        launch.notes.push_back(loop_key +
                               ": not set, and no reward_model.rollout.* key; read as the Megatron or FSDP "
                               "reward worker (use_reward_loop=False); veRL v0.7.0 and later default it to "
                               "true and serve the reward model with vLLM (set it, or its "
                               "reward_model.rollout.* sizes, to be priced so)");
      out.launch = std::move(launch);
      return out;
    }
    served = "reward_model.";
    path_key = served + "model.path";
  }
  const std::vector<std::string> reader_keys = {
      "reward_model.enable", "reward_model.model.path", "reward_model.use_dynamic_bsz",
      "reward_model.forward_max_token_len_per_gpu", "reward_model.megatron.tensor_model_parallel_size",
      "reward_model.megatron.pipeline_model_parallel_size"};
  std::vector<ConfigEntry> entries;
  for (ConfigEntry& e : launch.entries)
    if (e.key.compare(0, served.size(), served) != 0 ||
        (served == "reward_model." && e.key.rfind("reward_model.rollout.", 0) != 0 &&
         std::find(reader_keys.begin(), reader_keys.end(), e.key) == reader_keys.end()))
      entries.push_back(std::move(e));
  auto put = [&](const std::string& reader_key, Json value, const std::string& users) {
    entries.push_back({reader_key, std::move(value)});
    if (users != reader_key) out.user_names[reader_key] = users;
  };
  put("reward_model.enable", true, served + "enable");
  if (s.has(path_key)) put("reward_model.model.path", s.text(path_key, ""), path_key);
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
