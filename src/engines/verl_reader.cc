// A user's veRL launch script read back into a realign config and plan: the inverse of the veRL writer
// (verl.cc) for the hybrid engine and the fully_async recipe, with veRL's defaults (the keys of
// verl/trainer/config/_generated_ppo_trainer.yaml and _generated_ppo_megatron_trainer.yaml) for the keys a
// script leaves out.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/expert_rules.h"
#include "engines/megatron_stages.h"
#include "engines/placements.h"
#include "engines/script_reader.h"
#include "plan/execution_plan.h"

namespace realign::engines {
namespace {

constexpr const char* kActor = "actor_rollout_ref.actor";
constexpr const char* kRollout = "actor_rollout_ref.rollout";
constexpr const char* kRef = "actor_rollout_ref.ref";

std::string key(const std::string& prefix, const std::string& leaf) { return prefix + "." + leaf; }

// Advantage estimators whose dataflow is GRPO's: no critic, the same calls (rewards normalised or baselined
// within the prompt's group).
const std::vector<std::string> kCriticFree = {
    "grpo", "rloo", "reinforce_plus_plus", "reinforce_plus_plus_baseline", "opo", "grpo_passk", "gpg"};

// A role's layout on the trainer's pool of `world` GPUs: Megatron's tensor, pipeline and expert
// sizes, or FSDP's data parallelism over the pool. The reference runs in the actor's worker, whose Megatron
// parallel state is initialised once with the actor's sizes (verl/workers/megatron_workers.py,
// mpu.initialize_model_parallel with config.actor.megatron.*), and its own keys default to the actor's
// (_generated_ppo_megatron_trainer.yaml: ${oc.select:actor_rollout_ref.actor.megatron.*,1}): its layout is
// the actor's. The critic and reward model share that parallel state (read_verl_run). Context parallelism:
// Megatron's context_parallel_size (a K/V ring), or on FSDP the role's ulysses_sequence_parallel_size
// (DeepSpeed-Ulysses over a second device mesh of the pool; the reference's defaults to the actor's,
// _generated_ppo_trainer.yaml: ${oc.select:actor_rollout_ref.actor.ulysses_sequence_parallel_size,1}).
Strategy role_layout(const LaunchSettings& s, const std::string& prefix, bool megatron, int world) {
  Strategy st;
  const std::string cp_leaf = megatron ? "megatron.context_parallel_size" : "ulysses_sequence_parallel_size";
  const bool cp_from_actor = megatron || prefix == kRef;
  const std::string cp_key =
      s.has(key(prefix, cp_leaf)) || !cp_from_actor ? key(prefix, cp_leaf) : key(kActor, cp_leaf);
  st.cp = int(s.integer(cp_key, 1));
  st.cp_kind = megatron ? ContextParallel::kRing : ContextParallel::kUlysses;
  if (st.cp < 1 || world % st.cp != 0)
    throw Error(cp_key, std::to_string(st.cp) + " does not divide the " + std::to_string(world) +
                            " GPUs of trainer.nnodes x trainer.n_gpus_per_node");
  if (megatron) {
    // A role's own size where the script sets it (read_verl_run refuses one other than the actor's), else
    // the actor's, the parallel state it runs in.
    auto size = [&](const std::string& leaf) {
      return int(s.integer(key(prefix, leaf), s.integer(key(kActor, leaf), 1)));
    };
    st.tp = size("megatron.tensor_model_parallel_size");
    st.pp = size("megatron.pipeline_model_parallel_size");
    st.ep = size("megatron.expert_model_parallel_size");
    if (st.tp < 1 || st.pp < 1 || world % (st.tp * st.pp * st.cp) != 0)
      throw Error(key(prefix, "megatron.tensor_model_parallel_size"),
                  "tp " + std::to_string(st.tp) + " x pp " + std::to_string(st.pp) +
                      (st.cp > 1 ? " x cp " + std::to_string(st.cp) : "") + " does not divide the " +
                      std::to_string(world) + " GPUs of trainer.nnodes x trainer.n_gpus_per_node");
  }
  st.dp = world / (st.tp * st.pp * st.cp);
  return st;
}

// Where veRL reads a call's settings: the role whose layout it runs in, its micro-batch in sequences per
// GPU, or with dynamic batching its token budget per GPU (each with veRL's default, which is often another
// key's value), and a trained role's recomputation switch on FSDP.
struct CallKeys {
  std::string role, micro_batch, dynamic, tokens;
  std::string dynamic_default, tokens_default;  // keys whose value is the default ("" -> false / 16384)
  int64_t tokens_fallback = 16384;
  std::string micro_batch_default;  // a key whose value is this one's default
  std::string checkpointing;
};

const CallKeys& call_keys(const std::string& call) {
  static const std::string actor_dynamic = key(kActor, "use_dynamic_bsz");
  static const std::string actor_tokens = key(kActor, "ppo_max_token_len_per_gpu");
  static const std::map<std::string, CallKeys> keys = {
      {"actor_train",
       {kActor, key(kActor, "ppo_micro_batch_size_per_gpu"), actor_dynamic, actor_tokens, "", "", 16384, "",
        "actor_rollout_ref.model.enable_gradient_checkpointing"}},
      {"actor_inf",
       {kActor, key(kRollout, "log_prob_micro_batch_size_per_gpu"), key(kRollout, "log_prob_use_dynamic_bsz"),
        key(kRollout, "log_prob_max_token_len_per_gpu"), actor_dynamic, actor_tokens, 16384, "", ""}},
      {"ref_inf",
       {kRef, key(kRef, "log_prob_micro_batch_size_per_gpu"), key(kRef, "log_prob_use_dynamic_bsz"),
        key(kRef, "log_prob_max_token_len_per_gpu"), actor_dynamic, actor_tokens, 16384, "", ""}},
      {"critic_train",
       {"critic", "critic.ppo_micro_batch_size_per_gpu", "critic.use_dynamic_bsz",
        "critic.ppo_max_token_len_per_gpu", actor_dynamic, "", 32768, "",
        "critic.model.enable_gradient_checkpointing"}},
      {"critic_inf",
       {"critic", "critic.forward_micro_batch_size_per_gpu", "critic.use_dynamic_bsz",
        "critic.forward_max_token_len_per_gpu", actor_dynamic, "critic.ppo_max_token_len_per_gpu", 32768,
        "critic.ppo_micro_batch_size_per_gpu", ""}},
      {"reward_inf",
       {"reward_model", "reward_model.micro_batch_size_per_gpu", "reward_model.use_dynamic_bsz",
        "reward_model.forward_max_token_len_per_gpu", "critic.use_dynamic_bsz",
        "critic.ppo_max_token_len_per_gpu", 32768, "", ""}},
  };
  const auto it = keys.find(call);
  if (it == keys.end()) throw Error("algorithm", "realign has no veRL role for the call " + call);
  return it->second;
}

// Sequences per GPU in one micro-batch of call `m`: the script's size, or with dynamic batching its token
// budget over a whole sequence (prompt and response at their caps, so at least the micro-batches veRL runs).
// Under Ulysses a group of `ulysses` GPUs shares each sequence, and veRL multiplies the budget by it
// (dp_actor.py, dp_critic.py: max_token_len_per_gpu * ulysses_sequence_parallel_size).
int64_t per_gpu_sequences(const LaunchSettings& s, const CallKeys& k, const Mfc& m, int ulysses,
                          std::vector<std::string>& notes) {
  const bool dynamic_default = !k.dynamic_default.empty() && s.flag(k.dynamic_default, false);
  if (s.flag(k.dynamic, dynamic_default)) {
    const int64_t fallback =
        k.tokens_default.empty() ? k.tokens_fallback : s.integer(k.tokens_default, k.tokens_fallback);
    const int64_t tokens = s.integer(k.tokens, fallback) * ulysses;
    const int64_t seqs = std::max<int64_t>(1, tokens / std::max<int64_t>(1, m.seq_len()));
    notes.push_back(k.tokens + ": dynamic batching priced as micro-batches of " + std::to_string(seqs) +
                    " sequences of " + std::to_string(m.seq_len()) + " tokens (" + m.name +
                    (ulysses > 1 ? "; each split over " + std::to_string(ulysses) + " Ulysses ranks" : "") +
                    ")");
    return seqs;
  }
  if (s.has(k.micro_batch) && s.integer(k.micro_batch, 0) > 0) return s.integer(k.micro_batch, 0);
  if (!k.micro_batch_default.empty() && s.integer(k.micro_batch_default, 0) > 0)
    return s.integer(k.micro_batch_default, 0);
  throw Error(k.micro_batch, "not set; veRL needs a micro-batch size per GPU for " + m.name + " (or " +
                                 k.dynamic + "=True)");
}

// The vLLM rollout on `gpus` GPUs: replicas of the script's tensor (and expert) parallel size.
Strategy rollout_layout(const LaunchSettings& s, int gpus, int gpus_per_node) {
  Strategy st;
  st.tp = int(s.integer(key(kRollout, "tensor_model_parallel_size"), 2));
  st.ep = int(s.integer(key(kRollout, "expert_parallel_size"), 1));
  if (st.tp < 1 || gpus % st.tp != 0)
    throw Error(key(kRollout, "tensor_model_parallel_size"),
                std::to_string(st.tp) + " does not divide the rollout's " + std::to_string(gpus) + " GPUs");
  // A replica above a node spans world_size / gpus_per_node whole nodes (verl/workers/rollout/replica.py,
  // b178a3c:97-106, v0.7.0:104), each node's server given the node rank and node count
  // (vllm_rollout/vllm_async_server.py b178a3c:330-339; sglang_rollout/async_sglang_server.py likewise); its
  // all-reduces cross the NIC (cost/call_cost.cc). With expert parallelism veRL asserts that tp divides a
  // node.
  if (st.tp > gpus_per_node) {
    if (st.tp % gpus_per_node != 0)
      throw Error(
          key(kRollout, "tensor_model_parallel_size"),
          std::to_string(st.tp) + " spans nodes of " + std::to_string(gpus_per_node) +
              " GPUs (trainer.n_gpus_per_node) but not whole ones: veRL runs a rollout replica within "
              "one node or over whole nodes (replica.py asserts it), a multiple of " +
              std::to_string(gpus_per_node));
    if (st.ep > 1)
      throw Error(key(kRollout, "expert_parallel_size"),
                  std::to_string(st.ep) + " with " + key(kRollout, "tensor_model_parallel_size") + "=" +
                      std::to_string(st.tp) + " across nodes of " + std::to_string(gpus_per_node) +
                      " GPUs: veRL's vLLM server with expert parallelism asserts gpus_per_node % "
                      "tensor_model_parallel_size == 0 (vllm_async_server.py); tp up to " +
                      std::to_string(gpus_per_node) + " would be");
  }
  st.dp = gpus / st.tp;
  return st;
}

// The GPU pools: the hybrid engine's one pool (trainer.*), or fully_async's trainer and rollout pools, and
// the cluster they make together (one node split between them, or whole nodes of one size).
struct Pools {
  int trainer_gpus = 0, rollout_gpus = 0;  // rollout_gpus 0: the hybrid engine
  int nodes = 1, gpus_per_node = 8;
  int64_t staleness = 0;
  double staleness_share = 1;  // of a batch generated that far ahead: the fraction of staleness_threshold
};

// veRL's one-step-off recipe (verl/experimental/one_step_off_policy, docs/advance/one_step_off.md; earlier
// recipe/one_step_off_policy): the rollout on its own pool generates the next batch with the weights synced
// before this one trains, exactly one step off, with no staleness key and no partial rollouts.
bool one_step_off(const LaunchSettings& s, const std::string& config_name) {
  return s.text("-m", "").find("one_step_off_policy") != std::string::npos ||
         config_name.find("one_step_off") != std::string::npos;
}

Pools read_pools(const LaunchSettings& s, const std::string& config_name) {
  Pools p;
  const int tn = int(s.integer("trainer.nnodes", 1)), tg = int(s.integer("trainer.n_gpus_per_node", 8));
  p.trainer_gpus = tn * tg, p.nodes = tn, p.gpus_per_node = tg;
  const bool fully_async = config_name.find("fully_async") != std::string::npos ||
                           s.has("async_training.staleness_threshold") || s.has("rollout.nnodes");
  if (!fully_async) return p;
  const int rn = int(s.integer("rollout.nnodes", 1)), rg = int(s.integer("rollout.n_gpus_per_node", 8));
  p.rollout_gpus = rn * rg;
  if (rg == tg) {
    p.nodes = tn + rn;
  } else if (tn == 1 && rn == 1) {
    p.nodes = 1, p.gpus_per_node = tg + rg;
  } else {
    throw Error("rollout.n_gpus_per_node",
                std::to_string(rg) + " GPUs per node beside the trainer's " + std::to_string(tg) +
                    ": realign prices nodes of one size, or one node split between the two pools");
  }
  if (one_step_off(s, config_name)) {
    p.staleness = 1;
    return p;
  }
  // The share of stale samples the rollout may run ahead by (fully_async.md): between two syncs the
  // rollouter generates at most (1 + s) batches' samples, so with s = N - 1 + f it may run N - 1 batches
  // and the share f of the next ahead: train.staleness N, train.staleness_share f (with partial rollouts;
  // without them the threshold is rounded up to whole iterations).
  const double threshold = s.number("async_training.staleness_threshold", 0.0);
  if (threshold <= 0)
    throw Error("async_training.staleness_threshold",
                "0 (fully_async's on-policy pipeline) is not priced; realign prices its asynchronous modes, "
                "staleness_threshold > 0");
  p.staleness = int64_t(std::ceil(threshold - 1e-9));
  p.staleness_share = std::min(1.0, std::round((threshold - double(p.staleness) + 1) * 1e9) / 1e9);
  return p;
}

// The rollout's and the trainer's meshes: the whole cluster for both on the hybrid engine; for fully_async
// the first of veRL's placements that gives the rollout its pool's size, on the script's backend where one
// does (an FSDP script's mixture of experts is priced on Megatron's: FSDP's expert parallelism is not read).
// veRL's placements hold every split of the cluster into two valid meshes (whole nodes of any count, or one
// node cut anywhere), so where none fits, one of the pools is no mesh: said.
std::pair<DeviceMesh, DeviceMesh> pool_meshes(const DataflowGraph& g, const Cluster& c, const Pools& pools,
                                              bool megatron) {
  if (pools.rollout_gpus == 0) return {DeviceMesh{0, c.n_devices()}, DeviceMesh{0, c.n_devices()}};
  const size_t gen = size_t(g.mfc_index("actor_gen")), train = size_t(g.mfc_index("actor_train"));
  const std::vector<Placement> placements = make_engine("verl")->placements(g, c);
  for (const bool same_backend : {true, false})
    for (const Placement& p : placements)
      if (p.meshes[gen].size == pools.rollout_gpus && (!same_backend || sharded_backend(p) != megatron))
        return {p.meshes[gen], p.meshes[train]};
  const DeviceMesh rollout{0, pools.rollout_gpus}, trainer{pools.rollout_gpus, pools.trainer_gpus};
  const std::string why = !mesh_problem(rollout, c).empty()   ? "the rollout's: " + mesh_problem(rollout, c)
                          : !mesh_problem(trainer, c).empty() ? "the trainer's: " + mesh_problem(trainer, c)
                                                              : "";
  throw Error("rollout.n_gpus_per_node", "no veRL placement gives the rollout " +
                                             std::to_string(pools.rollout_gpus) + " GPUs beside the trainer's " +
                                             std::to_string(pools.trainer_gpus) +
                                             (why.empty() ? "" : " (" + why + ")"));
}

}  // namespace

ReadRun read_verl_run(const HydraLaunch& launch) {
  const LaunchSettings s(launch.entries);
  ReadRun run;
  run.notes = launch.notes;
  auto note = [&](const std::string& k, const std::string& text) { run.notes.push_back(k + ": " + text); };
  const std::string& config_name = launch.config_name;
  if (!launch.config_file.empty())
    note("--config-name", "read " + launch.config_file + " (on " + launch.base + "'s defaults)");
  const Pools pools = read_pools(s, config_name);
  if (pools.rollout_gpus == 0 && !s.flag("actor_rollout_ref.hybrid_engine", true))
    throw Error("actor_rollout_ref.hybrid_engine",
                "realign reads veRL's hybrid engine (hybrid_engine: true) and the fully_async recipe "
                "(rollout.nnodes, rollout.n_gpus_per_node), not separate pools otherwise");
  const bool megatron_default =
      (launch.config_file.empty() ? config_name : launch.base).find("megatron") != std::string::npos;
  const std::string strategy = s.text(key(kActor, "strategy"), megatron_default ? "megatron" : "fsdp");
  if (strategy != "megatron" && strategy != "fsdp" && strategy != "fsdp2")
    throw Error(key(kActor, "strategy"), "'" + strategy + "'; realign prices megatron, fsdp and fsdp2");
  const bool megatron = strategy == "megatron";
  run.options = {{"backend", megatron ? "megatron" : "fsdp"}};
  // Megatron's first and last stages cut to the script's counts, or holding the embedding and the loss
  // (megatron_stages.h; -1: unset or null).
  for (const char* role : {kActor, kRef, "critic"}) {
    const std::string config = key(role, "megatron.override_transformer_config.");
    for (const char* leaf : {"num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage"})
      if (megatron && s.integer(config + leaf, -1) != -1) run.pricing_options[kPipelineStageEnds] = true;
    for (const char* flag : {"account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"})
      if (megatron && s.flag(config + flag, false)) run.pricing_options[kPipelineStageEnds] = true;
  }

  // The workload.
  const std::string estimator = s.text("algorithm.adv_estimator", "gae");
  const bool ppo = estimator == "gae";
  if (!ppo && std::find(kCriticFree.begin(), kCriticFree.end(), estimator) == kCriticFree.end())
    throw Error("algorithm.adv_estimator",
                "'" + estimator +
                    "'; realign prices gae (PPO) and the critic-free estimators grpo, rloo, "
                    "reinforce_plus_plus, reinforce_plus_plus_baseline, opo, grpo_passk and gpg");
  if (!ppo && estimator != "grpo")
    note("algorithm.adv_estimator", estimator + " priced as GRPO's dataflow (the same calls, no critic)");
  run.workload.push_back({"algorithm.adv_estimator", estimator});  // kept in the config written back
  if (s.flag(key(kRollout, "enforce_eager"), false)) note(key(kRollout, "enforce_eager"), kEagerDecodingNote);
  const bool one_step = one_step_off(s, config_name);
  const bool partial = !one_step && pools.staleness > 0 && s.flag("async_training.partial_rollout", false);
  if (pools.rollout_gpus > 0) {
    if (!one_step && s.number("async_training.staleness_threshold", 0.0) != double(pools.staleness))
      note("async_training.staleness_threshold",
           partial ? "priced as train.staleness " + std::to_string(pools.staleness) +
                         " with train.staleness_share " + Json(pools.staleness_share).dump() +
                         " (that share of a batch generated ahead with the older weights)"
                   : "priced as train.staleness " + std::to_string(pools.staleness) +
                         " (whole iterations ahead: without partial_rollout realign rounds the share up)");
    note("async_training.recompute_old_log_prob",
         "priced with the proximal policy's log-probs recomputed (actor_inf), as realign's asynchronous "
         "graphs "
         "compute them");
  }
  if (ppo && pools.rollout_gpus > 0)
    throw Error("algorithm.adv_estimator",
                "gae: veRL's asynchronous recipes document no critic; realign prices fully_async with "
                "critic-free estimators");
  const int64_t mini = s.integer(key(kActor, "ppo_mini_batch_size"), 256);
  // A realign iteration is one batch between weight syncs: fully_async's trainer takes require_batches
  // mini-batches per local update and trigger_parameter_sync_step updates per sync (fully_async.md).
  if (one_step)
    note("-m", "veRL's one-step-off recipe: train.staleness 1 on the rollout's own pool, priced as realign "
               "prices veRL's split pools (named fully_async below), one data.train_batch_size a step");
  const int64_t steps = pools.rollout_gpus == 0 || one_step
                            ? 0
                            : s.integer("async_training.require_batches", 1) *
                                  s.integer("async_training.trigger_parameter_sync_step", 1);
  const int64_t prompts = steps > 0 ? steps * mini : s.integer("data.train_batch_size", 1024);
  if (mini < 1 || prompts % mini != 0)
    throw Error(key(kActor, "ppo_mini_batch_size"),
                std::to_string(mini) + " does not divide data.train_batch_size " + std::to_string(prompts));
  // DAPO's dynamic sampling drops groups whose samples all score alike and generates again until the batch
  // is full: realign's graph generates the train batch once.
  if (s.flag("algorithm.filter_groups.enable", false))
    note("algorithm.filter_groups.enable",
         "dynamic sampling priced as one generation of the " + std::to_string(prompts) +
             " prompts trained on; it generates data.gen_batch_size (" +
             std::to_string(s.integer("data.gen_batch_size", prompts)) +
             ") a round, again while filtered groups leave the batch short, so its generation takes longer");
  if (ppo && s.integer("critic.ppo_mini_batch_size", mini) != mini)
    note("critic.ppo_mini_batch_size",
         "priced with the actor's mini-batches (realign has one per iteration)");
  const int64_t n = s.integer(key(kRollout, "n"), 1);
  Json& c = run.config;
  c["algorithm"] = ppo ? "ppo" : "grpo";
  auto model = [&](const std::string& role, const std::string& k, const std::string& fallback) {
    read_model(run, role, k, s.text(k, fallback));
  };
  model("actor", "actor_rollout_ref.model.path", "~/models/deepseek-llm-7b-chat");
  // veRL builds the actor, reference and rollout from the HF config with model.override_config over it
  // (fsdp_workers.py: update_model_config(actor_model_config, override_config_kwargs)); DAPO's scripts raise
  // Qwen2.5-Math-7B's 4,096 positions so, which the lengths realign checks need.
  const std::string positions = "actor_rollout_ref.model.override_config.max_position_embeddings";
  if (s.has(positions)) {
    c["models"]["actor"] = {{"model", c["models"]["actor"]},
                            {"override_config", {{"max_position_embeddings", s.integer(positions, 0)}}}};
    run.sources["models.actor.override_config"] = positions;
  }
  if (ppo) model("critic", "critic.model.path", "~/models/deepseek-llm-7b-chat");
  const bool reward_model = s.flag("reward_model.enable", false);
  if (reward_model) model("reward", "reward_model.model.path", "~/models/FsfairX-LLaMA3-RM-v0.1");
  run.sources.insert({{"algorithm", "algorithm.adv_estimator"},
                      {"batch.prompts", "data.train_batch_size"},
                      {"batch.samples_per_prompt", key(kRollout, "n")},
                      {"batch.prompt_len", "data.max_prompt_length"},
                      {"batch.gen_len", "data.max_response_length"},
                      {"batch.gen_len_max", "data.max_response_length"},
                      {"train.partial_rollout", "async_training.partial_rollout"},
                      {"batch.mini_batches", key(kActor, "ppo_mini_batch_size")},
                      {"batch.epochs", key(kActor, "ppo_epochs")},
                      {"cluster.nodes", "trainer.nnodes"},
                      {"cluster.devices_per_node", "trainer.n_gpus_per_node"}});
  c["batch"] = {{"prompts", prompts},
                {"samples_per_prompt", n},
                {"prompt_len", s.integer("data.max_prompt_length", 512)},
                {"gen_len", s.integer("data.max_response_length", 512)},
                {"gen_len_max", s.integer("data.max_response_length", 512)},
                {"mini_batches", prompts / mini},
                {"epochs", s.integer(key(kActor, "ppo_epochs"), 1)}};
  c["reward"]["kind"] = reward_model ? "model" : "verifier";
  c["cluster"] = {{"nodes", pools.nodes}, {"devices_per_node", pools.gpus_per_node}};
  if (pools.staleness > 0) c["train"]["staleness"] = pools.staleness;
  if (partial) c["train"]["partial_rollout"] = true;
  if (partial && pools.staleness_share < 1) c["train"]["staleness_share"] = pools.staleness_share;
  c["plan"] = {{"mode", "search"}, {"seed", 1}, {"time_budget_s", 5}};
  // veRL builds a reference policy only for a KL term (verl/trainer/ppo/utils.py need_reference_policy:
  // algorithm.use_kl_in_reward or actor.use_kl_loss); without one the reference's keys go unread.
  const bool reference =
      s.flag(key(kActor, "use_kl_loss"), false) || s.flag("algorithm.use_kl_in_reward", false);
  if (reference) {
    // The KL term as veRL applies it (its defaults: kl_loss_coef and kl_ctrl.kl_coef 0.001); realign's
    // runtime takes the same two forms (train.ppo.kl_mode), and the writer writes it back.
    const bool in_loss = s.flag(key(kActor, "use_kl_loss"), false);
    const std::string coef = in_loss ? key(kActor, "kl_loss_coef") : "algorithm.kl_ctrl.kl_coef";
    c["train"]["ppo"]["kl_mode"] = in_loss ? "loss" : "reward";
    c["train"]["ppo"]["kl_coef"] = s.number(coef, 0.001);
    run.sources["train.ppo.kl_coef"] = coef;
  } else {
    c["models"]["ref"] = kNoReference;
    run.sources["models.ref"] = key(kActor, "use_kl_loss");
    note(key(kActor, "use_kl_loss"),
         "no KL term (nor algorithm.use_kl_in_reward), so veRL builds no reference model: priced without one "
         "(models.ref: none)");
  }

  // Settings that change the layout or the cost in ways realign does not price. (Context parallelism,
  // Megatron's or Ulysses's, is read into each role's layout: role_layout.)
  // veRL's default FSDP workers (trainer.use_legacy_worker_impl: auto) take Ulysses from
  // actor.ulysses_sequence_parallel_size (fsdp_workers.py), which role_layout reads; fsdp_config's own key is
  // read by its engine workers only (use_legacy_worker_impl: disable; workers/config/actor.py copies the
  // former into it, not back).
  const std::string engine_ulysses = key(kActor, "fsdp_config.ulysses_sequence_parallel_size");
  if (!megatron && s.has(engine_ulysses) &&
      s.integer(engine_ulysses, 1) != s.integer(key(kActor, "ulysses_sequence_parallel_size"), 1))
    note(engine_ulysses, std::to_string(s.integer(engine_ulysses, 1)) +
                             ": read by veRL's engine workers (trainer.use_legacy_worker_impl=disable) only; "
                             "priced with " +
                             key(kActor, "ulysses_sequence_parallel_size") + " " +
                             std::to_string(s.integer(key(kActor, "ulysses_sequence_parallel_size"), 1)) +
                             ", which its default workers read");
  for (const std::string& prefix : {std::string(kActor), std::string(kRef), std::string("critic")}) {
    if (s.integer(key(prefix, "megatron.virtual_pipeline_model_parallel_size"), 1) > 1)
      note(key(prefix, "megatron.virtual_pipeline_model_parallel_size"),
           "priced as plain 1F1B (interleaving would shrink the pipeline bubble)");
  }
  // Every Megatron role runs in the actor's parallel state: veRL colocates the roles' workers in one process
  // (WorkerDict), which initialises torch.distributed and Megatron's parallel state once
  // (megatron_workers.py: "we only require one distribute initialization"), with the actor's sizes. A size
  // the script sets otherwise is a layout the hybrid engine does not run, refused naming the key; the
  // critic's and reward model's left at veRL's default 1 are read as the actor's, noted.
  if (megatron) {
    std::vector<std::string> roles;
    if (reference) roles.push_back(kRef);
    if (ppo) roles.push_back("critic");
    if (reward_model) roles.push_back("reward_model");
    for (const std::string& role : roles)
      for (const char* leaf : {"megatron.tensor_model_parallel_size", "megatron.pipeline_model_parallel_size",
                               "megatron.expert_model_parallel_size", "megatron.context_parallel_size"}) {
        const int64_t actor = s.integer(key(kActor, leaf), 1);
        if (s.has(key(role, leaf)) && s.integer(key(role, leaf), actor) != actor)
          throw Error(key(role, leaf),
                      std::to_string(s.integer(key(role, leaf), actor)) + " beside " + key(kActor, leaf) +
                          " " + std::to_string(actor) +
                          ": veRL's colocated workers share one Megatron parallel state, the "
                          "actor's; set it to " +
                          std::to_string(actor) + " or leave it out");
        if (role != kRef && !s.has(key(role, leaf)) && actor != 1)
          note(key(role, leaf),
               "left at veRL's default 1, but the " + role +
                   " runs in the Megatron parallel state the actor's worker initialises: priced "
                   "at the actor's " +
                   std::to_string(actor) + " (set it to " + std::to_string(actor) + " to match)");
      }
  }
  // Expert tensor parallelism: veRL leaves it null, and Megatron then takes the tp (ModelParallelConfig), so
  // with ep > 1 and tp > 1 each expert is cut by tp as well; realign prices ep > 1 with whole experts
  // (expert tensor parallelism 1, as its writer sets it).
  if (megatron) {
    const std::string etp = key(kActor, "megatron.expert_tensor_parallel_size");
    const int64_t tp = s.integer(key(kActor, "megatron.tensor_model_parallel_size"), 1);
    const int64_t ep = s.integer(key(kActor, "megatron.expert_model_parallel_size"), 1);
    const int64_t experts_cut = s.integer(etp, tp);  // null: the tp
    if (ep > 1 && experts_cut != 1)
      note(etp, std::to_string(experts_cut) + (s.has(etp) ? "" : " (Megatron's default: the tp)") +
                    " with expert_model_parallel_size " + std::to_string(ep) +
                    ": priced with whole experts on each expert-parallel rank (expert tensor parallelism 1)");
  }
  // LoRA: FSDP's model.lora_rank, or the Megatron workers' model.lora.rank (veRL's Megatron LoRA).
  for (const char* lora : {"actor_rollout_ref.model.lora_rank", "actor_rollout_ref.model.lora.rank"})
    if (s.integer(lora, 0) > 0) throw Error(lora, "LoRA training is not priced by realign");
  for (const char* k : {"actor_rollout_ref.actor.fsdp_config.param_offload",
                        "actor_rollout_ref.actor.fsdp_config.optimizer_offload",
                        "actor_rollout_ref.actor.megatron.param_offload",
                        "actor_rollout_ref.actor.megatron.optimizer_offload",
                        "critic.model.fsdp_config.param_offload", "critic.megatron.param_offload"})
    if (s.flag(k, false)) note(k, "priced on the GPUs (realign offloads only models that are never trained)");
  // FSDP's fsdp_size: -1 (or the world) shards over the whole pool; 0 < N < world is HSDP, sharded over
  // groups of N and replicated across them (verl/workers/fsdp_workers.py create_device_mesh, mesh (world / N,
  // N)). The actor's key sets the actor-rollout-ref worker's mesh, priced so (the pricing option
  // "fsdp_size"); the critic's sets its own, noted as priced over the pool.
  if (!megatron) {
    const int world = pools.trainer_gpus;
    const std::string actor_size = key(kActor, "fsdp_config.fsdp_size");
    const int64_t size = s.integer(actor_size, -1);
    if (size > 0 && size < world) {
      if (world % size != 0)
        throw Error(actor_size, std::to_string(size) + " does not divide the trainer's " +
                                    std::to_string(world) +
                                    " GPUs (veRL's HSDP mesh is world / fsdp_size x fsdp_size)");
      run.pricing_options["fsdp_size"] = size;
      note(actor_size, std::to_string(size) + ": the actor and reference sharded over groups of " +
                           std::to_string(size) + " GPUs (HSDP), replicated " + std::to_string(world / size) +
                           " times, as priced");
    }
    const std::string critic_size = "critic.model.fsdp_config.fsdp_size";
    if (ppo && s.integer(critic_size, -1) > 0 && s.integer(critic_size, -1) < world)
      note(critic_size,
           std::to_string(s.integer(critic_size, -1)) +
               ": veRL shards the critic over groups of that many GPUs (HSDP); priced as sharded "
               "over all " +
               std::to_string(world) + " (less memory a GPU than veRL holds)");
  }
  if (s.text(key(kRollout, "name"), "vllm") != "vllm")
    note(key(kRollout, "name"), "'" + s.text(key(kRollout, "name"), "") + "' priced as vLLM");

  // The layout, once the config's graph exists.
  run.plan = [s, megatron, pools, reference](const DataflowGraph& g, const Cluster& cluster,
                                             std::vector<std::string>& notes) {
    const auto [gen_mesh, train_mesh] = pool_meshes(g, cluster, pools, megatron);
    ExecutionPlan plan;
    plan.name = "script";
    for (const Mfc& m : g.mfcs) {
      if (m.kind() == MfcKind::kGenerate) {
        plan.assignments.push_back({m.name, gen_mesh, rollout_layout(s, gen_mesh.size, cluster.devices_per_node)});
        continue;
      }
      const CallKeys& k = call_keys(m.name);
      Strategy st = role_layout(s, k.role, megatron, train_mesh.size);
      // Megatron can cut stages unevenly (megatron_stages.h): the ends through override_transformer_config.
      if (megatron) {
        const std::string pp_key = s.has(key(k.role, "megatron.pipeline_model_parallel_size"))
                                       ? key(k.role, "megatron.pipeline_model_parallel_size")
                                       : key(kActor, "megatron.pipeline_model_parallel_size");
        const auto end_key = [&](const std::string& leaf) {
          const std::string own = key(k.role, "megatron.override_transformer_config." + leaf);
          return s.has(own) ? own : key(kActor, "megatron.override_transformer_config." + leaf);
        };
        const std::string first_key = end_key("num_layers_in_first_pipeline_stage"),
                          last_key = end_key("num_layers_in_last_pipeline_stage"),
                          embedding_key = end_key("account_for_embedding_in_pipeline_split"),
                          loss_key = end_key("account_for_loss_in_pipeline_split");
        const auto end = [&](const std::string& k2) -> std::optional<int> {
          const int64_t layers = s.integer(k2, -1);  // -1: unset or null
          return layers == -1 ? std::nullopt : std::optional<int>(int(layers));
        };
        const std::string stages = megatron_stage_note(
            int(g.model(m.model).spec.n_layers), st.pp,
            {end(first_key), end(last_key), s.flag(embedding_key, false), s.flag(loss_key, false)},
            {pp_key, first_key, last_key, embedding_key, loss_key},
            [&](int pp) { return train_mesh.size % (st.tp * st.cp * pp) == 0; });
        const std::string n = pp_key + ": " + stages;
        if (!stages.empty() && std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
      }
      // cp against the call's sequences and, for Ulysses, the model's heads: named by the role's key.
      if (const std::string why = strategy_problem(m, g.model(m.model).spec, cluster, train_mesh.size, st);
          why.rfind("cp", 0) == 0) {
        const std::string leaf =
            megatron ? "megatron.context_parallel_size" : "ulysses_sequence_parallel_size";
        throw Error(s.has(key(k.role, leaf)) ? key(k.role, leaf) : key(kActor, leaf), why);
      }
      const int64_t seqs = m.seqs_per_pass();
      st.micro_batches = micro_batches_of(
          k.micro_batch, seqs, st.dp,
          per_gpu_sequences(s, k, m, st.cp_kind == ContextParallel::kUlysses ? st.cp : 1, notes));
      if (m.kind() == MfcKind::kTrain) {
        st.zero1 = megatron ? s.flag(key(k.role, "megatron.use_distributed_optimizer"), true) : st.dp > 1;
        st.recompute = megatron
                           ? s.text(key(k.role, "megatron.override_transformer_config.recompute_granularity"),
                                    "") == "full"
                           : s.flag(k.checkpointing, true);  // veRL's default: true (Sources)
      }
      plan.assignments.push_back({m.name, train_mesh, st});
    }
    // The Megatron reference offloads as the actor does unless told otherwise (the generated config's
    // ${oc.select:actor_rollout_ref.actor.megatron.param_offload,False}).
    const bool actor_offload = megatron && s.flag(key(kActor, "megatron.param_offload"), false);
    if (reference &&
        s.flag(megatron ? key(kRef, "megatron.param_offload") : key(kRef, "fsdp_config.param_offload"),
               actor_offload))
      plan.offload.push_back(Role::kRef);
    if (g.mfc_index("reward_inf") >= 0 && s.flag(megatron ? "reward_model.megatron.param_offload"
                                                          : "reward_model.model.fsdp_config.param_offload",
                                                 false))
      plan.offload.push_back(Role::kReward);
    return plan;
  };
  return run;
}

}  // namespace realign::engines
