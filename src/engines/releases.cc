#include "engines/releases.h"

#include <algorithm>

#include "core/error.h"
#include "engines/engine.h"

namespace realign::engines {

namespace {

// OpenRLHF v0.10.2 (ed62d0e2 "dotted config hierarchy") renamed train_ppo_ray.py's flags into groups; the
// flat names of v0.10.1.post2's parser for those realign writes (both parsers read at their tags:
// `--data.max_len` and `--max_len` are the total of prompt and response in both).
const std::map<std::string, std::string> kOpenRlhfFlatFlags = {
    {"--actor.model_name_or_path", "--pretrain"},
    {"--critic.model_name_or_path", "--critic_pretrain"},
    {"--reward.model_name_or_path", "--reward_pretrain"},
    {"--reward.remote_url", "--remote_rm_url"},
    {"--data.prompt_dataset", "--prompt_data"},
    {"--algo.advantage.estimator", "--advantage_estimator"},
    {"--rollout.n_samples_per_prompt", "--n_samples_per_prompt"},
    {"--rollout.batch_size", "--rollout_batch_size"},
    {"--train.batch_size", "--train_batch_size"},
    {"--train.max_epochs", "--max_epochs"},
    {"--data.max_len", "--max_len"},
    {"--rollout.max_new_tokens", "--max_new_tokens"},
    {"--train.micro_batch_size", "--micro_train_batch_size"},
    {"--rollout.micro_batch_size", "--micro_rollout_batch_size"},
    {"--ds.zero_stage", "--zero_stage"},
    {"--ds.param_dtype", "--param_dtype"},
    {"--actor.gradient_checkpointing_enable", "--gradient_checkpointing"},
    {"--actor.num_nodes", "--actor_num_nodes"},
    {"--actor.num_gpus_per_node", "--actor_num_gpus_per_node"},
    {"--ref.num_nodes", "--ref_num_nodes"},
    {"--ref.num_gpus_per_node", "--ref_num_gpus_per_node"},
    {"--critic.num_nodes", "--critic_num_nodes"},
    {"--critic.num_gpus_per_node", "--critic_num_gpus_per_node"},
    {"--reward.num_nodes", "--reward_num_nodes"},
    {"--reward.num_gpus_per_node", "--reward_num_gpus_per_node"},
    {"--train.colocate_all", "--colocate_all_models"},
    {"--train.colocate_actor_ref", "--colocate_actor_ref"},
    {"--train.colocate_critic_reward", "--colocate_critic_reward"},
    {"--vllm.num_engines", "--vllm_num_engines"},
    {"--vllm.tensor_parallel_size", "--vllm_tensor_parallel_size"},
    {"--vllm.gpu_memory_utilization", "--vllm_gpu_memory_utilization"},
    {"--vllm.enable_sleep", "--vllm_enable_sleep"},
    {"--train.async_enable", "--async_train"},
    {"--train.async_queue_size", "--async_queue_size"},
    {"--algo.kl.init_coef", "--init_kl_coef"},
    {"--algo.kl.use_loss", "--use_kl_loss"},
    {"--vllm.enforce_eager", "--enforce_eager"},
    {"--ds.adam_offload", "--adam_offload"},
    {"--ref.offload", "--ref_reward_offload"},
    {"--reward.offload", "--ref_reward_offload"},
    {"--ds.tensor_parallel_size", "--ds_tensor_parallel_size"},
    {"--ds.ring_attn_size", "--ring_attn_size"},
    {"--ds.lora.rank", "--lora_rank"},
};

Release named(const std::string& engine, const std::string& tag, const std::string& commit,
              const std::string& date, const std::string& repo, const std::string& differs) {
  Release r;
  r.engine = engine, r.tag = tag, r.commit = commit, r.date = date, r.repo = repo, r.differs = differs;
  return r;
}

std::vector<Release> make(const std::string& engine) {
  if (engine == "verl") {
    // The repository moved from volcengine/verl to verl-project/verl; both hold these tags.
    Release current = named("verl", "v0.9.0", "483b8a009ba3a97563edee3a19887e4862b8094a", "2026-08-14",
                            "verl-project/verl", "");
    current.served_reward_model = true;
    current.fully_async_module = "verl.experimental.fully_async_policy.fully_async_main";
    Release previous =
        named("verl", "v0.7.0", "f9c855f7cf04d603c9546bc01776c74806a879c1", "2026-01-05", "verl-project/verl",
              "the reward model is a Megatron or FSDP worker (reward_model.*), as before the reward loop "
              "(v0.7.1); fully_async is the recipe recipe.fully_async_policy");
    previous.fully_async_module = "recipe.fully_async_policy.fully_async_main";
    return {current, previous};
  }
  if (engine == "openrlhf") {
    Release previous =
        named("openrlhf", "v0.10.1.post2", "ff481ecdc97b861c0cbf07ce49284969a1bd9878", "2026-04-15",
              "OpenRLHF/OpenRLHF",
              "train_ppo_ray.py's flat flags (--actor_num_nodes, --vllm_num_engines, ...), before the "
              "dotted groups of v0.10.2");
    previous.flag_names = kOpenRlhfFlatFlags;
    return {named("openrlhf", "v0.11.0", "3c3be6234e0cb353e76bb8019947db9dfe99fca7", "2026-08-13",
                  "OpenRLHF/OpenRLHF", ""),
            previous};
  }
  if (engine == "areal") {
    // The repository moved from inclusionAI/AReaL to areal-project/AReaL; both hold v1.0.2.
    Release current = named("areal", "v2.0.0", "fee938eada49208a5aabdbc1095730a13076a349", "2026-07-02",
                            "areal-project/AReaL", "");
    current.per_engine_backend = true;
    return {current,
            named("areal", "v1.0.2", "9ca680ba0cdb409a5e45f25b0ec0d789ac9b4d79", "2026-03-17",
                  "areal-project/AReaL",
                  "allocation_mode alone gives the GPUs (no per-engine backend fields, which v1.0.3 added)")};
  }
  if (engine == "nemo-rl")
    return {named("nemo-rl", "v0.7.0", "81aa43dda4765b0429cf31dab44441e4e4383911", "2026-07-29",
                  "NVIDIA-NeMo/RL", "")};
  return {};
}

}  // namespace

std::string Release::describe(const std::string& display_name) const {
  return display_name + " " + tag + " (" + repo + " " + commit.substr(0, 7) + ", " + date + ")";
}

Json Release::to_json() const {
  Json j = {{"tag", tag}, {"commit", commit}, {"date", date}, {"repository", repo}};
  if (!differs.empty()) j["differs"] = differs;
  return j;
}

const std::vector<Release>& releases(const std::string& engine) {
  static const std::map<std::string, std::vector<Release>> all = [] {
    std::map<std::string, std::vector<Release>> m;
    for (const auto& name : engine_names()) m[name] = make(name);
    return m;
  }();
  static const std::vector<Release> none;
  const auto it = all.find(engine);
  return it == all.end() ? none : it->second;
}

EngineName parse_engine_name(const std::string& name, const std::string& path) {
  const size_t at = name.find('@');
  EngineName out{name.substr(0, at), nullptr};
  const auto& known = releases(out.engine);
  if (known.empty())
    throw Error(path, "unknown engine '" + out.engine + "'; choose verl, openrlhf, areal or nemo-rl");
  if (at == std::string::npos) {
    out.release = &known.front();
    return out;
  }
  const std::string tag = name.substr(at + 1);
  for (const Release& r : known)
    if (r.tag == tag || r.tag == "v" + tag) out.release = &r;  // "0.7.0" names v0.7.0 too
  if (out.release) return out;
  std::string valid;
  for (const Release& r : known)
    valid +=
        (valid.empty() ? "" : ", ") + out.engine + "@" + r.tag + (&r == &known.front() ? " (current)" : "");
  throw Error(path, "realign writes no " + out.engine + " release '" + tag + "'; it writes " + valid);
}

}  // namespace realign::engines
