// veRL (volcengine/verl) with Megatron or FSDP training and a vLLM rollout: the hybrid engine (every role on
// one resource pool) for synchronous PPO/GRPO, and the fully_async recipe (rollout GPUs apart from training
// GPUs, `async_training.staleness_threshold`) when train.staleness > 0.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/expert_rules.h"
#include "engines/placements.h"
#include "engines/script_reader.h"
#include "engines/users_words.h"
#include "engines/verl_reward_keys.h"
#include "engines/write_helpers.h"

namespace realign::engines {

namespace {

// The config trees every key below is read from (Megatron's, FSDP's).
constexpr const char* kTree = "volcengine/verl verl/trainer/config/_generated_ppo_megatron_trainer.yaml";
constexpr const char* kFsdpTree = "volcengine/verl verl/trainer/config/_generated_ppo_trainer.yaml";
constexpr const char* kWorkers = "volcengine/verl verl/workers/megatron_workers.py";
constexpr const char* kFullyAsync = "volcengine/verl docs/advance/fully_async.md";
constexpr const char* kOneStepOff = "volcengine/verl docs/advance/one_step_off.md";
constexpr const char* kVllmServer =
    "verl-project/verl verl/workers/rollout/vllm_rollout/vllm_async_server.py";
constexpr const char* kRewardLoop = "verl-project/verl verl/trainer/main_ppo_v0.py";

// The calls veRL's training workers run in the actor's layout (all but the rollout).
const std::vector<std::string> kTrainingCalls = {"actor_train", "actor_inf",    "ref_inf",
                                                 "critic_inf",  "critic_train", "reward_inf"};

bool async(const DataflowGraph& g) { return g.staleness > 0; }

class Verl : public Engine {
 public:
  explicit Verl(Release release) : release_(std::move(release)) {}
  std::string name() const override { return "verl"; }
  std::string display_name() const override { return "veRL"; }
  const Release& release() const override { return release_; }

  std::vector<Rule> rules() const override {
    return {
        {"Synchronous runs use the hybrid engine: actor, rollout, reference, critic and reward model share "
         "one resource pool of trainer.nnodes x trainer.n_gpus_per_node GPUs "
         "(actor_rollout_ref.hybrid_engine: true; " +
             std::string(release_.served_reward_model ? "reward.reward_model" : "reward_model") +
             ".enable_resource_pool: false)",
         kTree},
        {"Colocated Megatron workers share one process and initialise Megatron's parallel state once, with "
         "the actor's tensor/pipeline sizes: reference, critic and reward model run in the actor's layout",
         kWorkers},
        {"The rollout's tensor parallel size divides the pool's GPUs (dp = world / infer_tp); realign "
         "proposes "
         "no rollout pipeline parallelism (the vLLM rollout's device mesh is (dp, infer_tp))",
         kWorkers},
        {"Training is Megatron: tensor_model_parallel_size, pipeline_model_parallel_size, "
         "use_distributed_optimizer (realign's ZeRO-1) and full recomputation through "
         "override_transformer_config per role",
         kTree},
        {"Or FSDP (strategy: fsdp, the default trainer): every role's weights, gradients and optimizer state "
         "sharded over the pool's GPUs (fsdp_size -1), priced as ZeRO-3; data parallelism only (realign "
         "proposes no Ulysses sequence parallelism), enable_gradient_checkpointing per model, param_offload "
         "for reference and reward model; dense models only (FSDP's expert parallelism was not read)",
         kFsdpTree},
        {"Pipeline stages hold equal numbers of layers (Megatron-Core builds num_layers / pp layers per "
         "stage; "
         "uneven splits need settings realign does not write)",
         kTree},
        {"The reference policy is the actor's starting checkpoint (actor_rollout_ref.model.path): models.ref "
         "must be the actor's model",
         kTree},
        release_.served_reward_model
            ? Rule{"The reference may keep its weights in host memory between calls "
                   "(actor_rollout_ref.ref.megatron.param_offload); the reward model is the reward loop's "
                   "vLLM "
                   "server on the pool (reward.reward_model.rollout.*), asleep between its calls with its "
                   "weights in host memory, in the layout realign ties to the actor's",
                   kRewardLoop}
            : Rule{"Reference and reward model may keep their weights in host memory between calls "
                   "(actor_rollout_ref.ref.megatron.param_offload, reward_model.megatron.param_offload)",
                   kTree},
        {"The critic computes values in its training micro-batches on Megatron (compute_values reads "
         "ppo_micro_batch_size_per_gpu; the Megatron tree has no critic.forward_micro_batch_size_per_gpu); "
         "realign writes FSDP's forward micro-batch the same",
         kWorkers},
        {"With train.staleness > 0, the fully_async recipe: rollout on rollout.nnodes x "
         "rollout.n_gpus_per_node GPUs, every training role on trainer.nnodes x trainer.n_gpus_per_node, "
         "weights broadcast over NCCL, freshness bounded by async_training.staleness_threshold",
         kFullyAsync},
        {"Mixture-of-experts training: expert_model_parallel_size per role with expert_tensor_parallel_size "
         "1 is Megatron-Core's MoE parallel folding, realign's ep: ep divides the experts and dp x tp; with "
         "ep 1 the experts are cut by tp (expert_tensor_parallel_size = tp, Megatron's default)",
         kMegatronMoeFolding},
        {"Actor and reference initialise Megatron's parallel state once, with the actor's "
         "expert_model_parallel_size and expert_tensor_parallel_size: every Megatron role runs the actor's "
         "ep",
         kWorkers},
        {"A vLLM rollout with expert_parallel_size > 1 must have expert_parallel_size = "
         "tensor_model_parallel_size x data_parallel_size (one server's GPUs)",
         kVerlRolloutConfig},
        {"With rollout.expert_parallel_size > 1, each vLLM server is launched with --enable-expert-parallel "
         "and --data-parallel-size rollout.data_parallel_size",
         kVerlVllmServer},
        {"A rollout server spans tensor x data x pipeline parallel GPUs: part of one node or whole nodes",
         kVerlReplica},
        {"The asynchronous recipes document group-baseline estimators only (GRPO, RLOO, REINFORCE++, ...; "
         "no GAE): a PPO critic is not proposed asynchronously",
         kOneStepOff},
    };
  }

  void check_graph(const DataflowGraph& g, const Cluster& /*cluster*/) const override {
    if (g.algorithm != Algorithm::kPpo && g.algorithm != Algorithm::kGrpo)
      throw Error("algorithm",
                  "realign writes veRL configs for ppo and grpo only, not " + to_string(g.algorithm));
    if (g.mfc_index("actor_inf") < 0)
      throw Error(
          "train.ppo.behaviour_logprobs",
          "veRL recomputes the behaviour log-probs with the actor (compute_log_prob); set it to recompute");
    if (g.has_model(Role::kRef) && !(g.model(Role::kRef).spec == g.model(Role::kActor).spec))
      throw Error("models.ref", std::string("veRL's reference policy is the actor's checkpoint (") + kTree +
                                    "): models.ref must be the actor's model, or none");
    if (async(g) && g.mfc_index("critic_train") >= 0)
      throw Error("train.staleness", std::string("veRL's asynchronous recipes document no critic (GAE) (") +
                                         kOneStepOff + "); use algorithm: grpo or train.staleness: 0");
  }

  std::vector<Placement> placements(const DataflowGraph& g, const Cluster& c) const override {
    const auto training = present(g, kTrainingCalls);
    // The node size travels with the placement: a rollout server with expert parallelism spans part of one
    // node or whole nodes (vllm_ep_problem).
    std::vector<Placement> out;
    for (const Json& options : training_backends(g, c, "fsdp")) {
      const std::string on = ", " + options["backend"].get<std::string>();
      if (!async(g)) {
        const DeviceMesh all{0, c.n_devices()};
        out.push_back(
            group_placement(g, {{"actor_gen"}, training}, {all, all}, "hybrid engine" + on, options));
        continue;
      }
      // trainer.nnodes and rollout.nnodes take any split of the nodes (12 + 4 in its Qwen3-30B-A3B recipe),
      // n_gpus_per_node any split of one node (its 2_6 scripts: 2 rollout GPUs beside 6 trainers).
      for (const auto& m : cover_cluster(c, 2, {/*all_node_runs=*/true, /*node_splits=*/true}))
        out.push_back(group_placement(g, {{"actor_gen"}, training}, m, "fully_async" + on, options));
    }
    return out;
  }

  std::string strategy_problem(const DataflowGraph& g, const Placement& p, size_t call, int,
                               const Strategy& s) const override {
    const Mfc& m = g.mfcs[call];
    const ModelSpec& spec = g.model(m.model).spec;
    // The asynchronous recipes' rollout runs in async mode (one_step_off_policy/ray_trainer.py asserts
    // rollout.mode == "async"; fully_async's rollouter streams): the agent loop sends each request to a
    // server as it frees, so the batch need not split evenly over the replicas (the fullest is priced).
    const bool request_level = m.kind() == MfcKind::kGenerate && async(g);
    if (std::string why = batch_split_problem(m, s); !why.empty() && !request_level) return why;
    if (m.kind() == MfcKind::kGenerate) {
      if (s.pp != 1) return "veRL's vLLM rollout is proposed with tensor and data parallelism only (pp 1)";
      return vllm_ep_problem(spec, s, p.options.value("gpus_per_node", 1));
    }
    // Context parallelism (read from scripts, never proposed): Megatron's ring, FSDP's Ulysses. An FSDP
    // script's mixture of experts is priced on the Megatron placement (FSDP's expert parallelism is not
    // read), its Ulysses with it.
    if (s.cp > 1 && sharded_backend(p) && s.cp_kind != ContextParallel::kUlysses)
      return "veRL's FSDP splits sequences by Ulysses, not a ring";
    if (s.cp > 1 && !sharded_backend(p) && !spec.is_moe() && s.cp_kind != ContextParallel::kRing)
      return "veRL's Megatron splits sequences by a ring, not Ulysses";
    if (!sharded_backend(p)) return megatron_layout_problem(spec, s, p.options.value(kPipelineStageEnds, false));
    return sharded_layout_problem(m, s, false);
  }

  bool can_offload() const override { return true; }

  std::vector<std::vector<std::string>> tied(const DataflowGraph& g) const override {
    return {present(g, kTrainingCalls)};
  }

  Pricing pricing(const DataflowGraph& g) const override {
    Pricing p;
    p.engine = name();
    p.cuda_graph_decoding = true;
    p.cuda_graph_source = std::string(kTree) + ": actor_rollout_ref.rollout.enforce_eager: false";
    p.broadcast_weight_sync = async(g);
    // One micro-batch size for the critic's two calls (verl_reader and write_config).
    if (g.mfc_index("critic_inf") >= 0) {
      p.micro_batch_size_from = {{"critic_inf", "critic_train"}};
      p.micro_batch_size_source =
          std::string(kWorkers) + ": the Megatron critic's compute_values runs ppo_micro_batch_size_per_gpu";
    }
    if (release_.served_reward_model && g.mfc_index("reward_inf") >= 0) {
      p.host_resident = {Role::kReward};
      p.host_resident_source =
          std::string(kVllmServer) +
          ": a colocated reward server sleeps at level 1 between its calls (weights to host "
          "memory, KV cache freed)";
    }
    p.weight_sync_source =
        async(g) ? std::string(kFullyAsync) + ": NCCL parameter synchronization, tensor by tensor from rank 0"
                 : std::string(kWorkers) +
                       ": MegatronVLLMShardingManager reshards in place (realign's own "
                       "reallocation prices it)";
    return p;
  }

  std::vector<ConfigEntry> write_config(const WriteInput& in, const ExecutionPlan& plan) const override {
    const DataflowGraph& g = *in.graph;
    const Cluster& c = *in.cluster;
    auto at = [&](const std::string& call) -> const MfcAssignment* {
      const int i = g.mfc_index(call);
      return i < 0 ? nullptr : &plan.assignments[size_t(i)];
    };
    auto mfc = [&](const std::string& call) -> const Mfc& { return g.mfcs[size_t(g.mfc_index(call))]; };
    const Mfc& train = mfc("actor_train");
    const MfcAssignment& gen = *at("actor_gen");
    const MfcAssignment& actor = *at("actor_train");
    const int64_t prompts = in.batch.prompts;
    const bool on_fsdp = sharded_backend(written_placement(*this, in, plan));
    const std::string strategy = on_fsdp ? "fsdp" : "megatron";
    std::vector<ConfigEntry> e;
    auto put = [&](const std::string& k, Json v) { e.push_back({k, std::move(v)}); };
    // A role's layout: Megatron's parallel sizes (and a trained role's optimizer and recomputation); FSDP
    // shards over the whole pool by default, its recomputation one switch per model (`checkpointing`).
    auto layout = [&](const std::string& prefix, const Strategy& s, bool trained, bool moe_model,
                      const std::string& checkpointing) {
      if (!on_fsdp) return megatron(e, prefix, s, trained, moe_model);
      if (s.cp > 1) put(prefix + ".ulysses_sequence_parallel_size", s.cp);
      if (trained) put(checkpointing, s.recompute);
    };
    put("algorithm.adv_estimator", g.algorithm == Algorithm::kPpo ? "gae" : "grpo");
    put("data.train_files", train_data(in.raw_config));
    put("data.val_files", train_data(in.raw_config));
    put("data.train_batch_size", async(g) ? 0 : prompts);
    put("data.max_prompt_length", train.prompt_len);
    put("data.max_response_length",
        g.mfcs[size_t(g.mfc_index("actor_gen"))].max_new_tokens());  // the cap, not the mean
    put("actor_rollout_ref.model.path", model_path(in.raw_config, Role::kActor));
    put("actor_rollout_ref.hybrid_engine", !async(g));
    put("actor_rollout_ref.actor.strategy", strategy);
    put("actor_rollout_ref.actor.ppo_mini_batch_size", prompts / train.mini_batches);
    put("actor_rollout_ref.actor.ppo_epochs", train.epochs);
    put("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", micro_batch_per_gpu(train, actor.strategy));
    const bool moe = g.model(Role::kActor).spec.is_moe();
    layout("actor_rollout_ref.actor", actor.strategy, true, moe,
           "actor_rollout_ref.model.enable_gradient_checkpointing");
    put("actor_rollout_ref.rollout.name", "vllm");
    put("actor_rollout_ref.rollout.n", in.batch.samples_per_prompt);
    put("actor_rollout_ref.rollout.tensor_model_parallel_size", gen.strategy.tp);
    if (gen.strategy.ep > 1) {
      // One vLLM server per expert-parallel group: tp x data_parallel_size GPUs holding every expert once.
      put("actor_rollout_ref.rollout.data_parallel_size", vllm_data_parallel(gen.strategy));
      put("actor_rollout_ref.rollout.expert_parallel_size", gen.strategy.ep);
    }
    if (!in.call_memory_bytes.empty()) {
      // vLLM's memory share: what generation needs (weights, KV cache), rounded up to 5%; in the hybrid
      // engine it frees its KV cache after the rollout (rollout.free_cache_engine: true).
      const double need = in.call_memory_bytes[size_t(g.mfc_index("actor_gen"))] / c.device.memory_bytes;
      put("actor_rollout_ref.rollout.gpu_memory_utilization",
          std::min(0.95, std::ceil(need * 20.0 + 1e-9) / 20.0));
    }
    put("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
        micro_batch_per_gpu(mfc("actor_inf"), at("actor_inf")->strategy));
    // veRL builds the reference only for a KL term (need_reference_policy): the plan's reference call is
    // written as one, in the form and with the coefficient of realign's config; none, as no KL.
    const MfcAssignment* ref = at("ref_inf");
    const double kl_coef = written_kl_coef(in);
    put("actor_rollout_ref.actor.use_kl_loss", ref && in.kl_in_loss);
    if (ref && in.kl_in_loss) put("actor_rollout_ref.actor.kl_loss_coef", kl_coef);
    if (ref && !in.kl_in_loss) {
      put("algorithm.use_kl_in_reward", true);
      put("algorithm.kl_ctrl.kl_coef", kl_coef);
    }
    if (ref) {
      put("actor_rollout_ref.ref.strategy", strategy);
      put("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
          micro_batch_per_gpu(mfc("ref_inf"), ref->strategy));
      layout("actor_rollout_ref.ref", ref->strategy, false, moe, "");
      if (offloaded(plan, Role::kRef))
        put(on_fsdp ? "actor_rollout_ref.ref.fsdp_config.param_offload"
                    : "actor_rollout_ref.ref.megatron.param_offload",
            true);
    }
    if (const MfcAssignment* critic = at("critic_train")) {
      put("critic.strategy", strategy);
      put("critic.model.path", model_path(in.raw_config, Role::kCritic));
      const int64_t micro_batch = micro_batch_per_gpu(mfc("critic_train"), critic->strategy);
      put("critic.ppo_micro_batch_size_per_gpu", micro_batch);
      // The Megatron critic computes values in its training micro-batches (megatron_workers.py
      // compute_values; the Megatron tree has no forward key); FSDP's is written to the same, as priced
      // (pricing(): micro_batch_size_from).
      if (on_fsdp) put("critic.forward_micro_batch_size_per_gpu", micro_batch);
      layout("critic", critic->strategy, true, g.model(Role::kCritic).spec.is_moe(),
             "critic.model.enable_gradient_checkpointing");
    }
    if (const MfcAssignment* reward = at("reward_inf")) {
      const int64_t micro_batch = micro_batch_per_gpu(mfc("reward_inf"), reward->strategy);
      if (release_.served_reward_model) {
        // The reward loop's vLLM server on the pool, in the layout realign ties to the actor's; a step of
        // max_num_batched_tokens prefills the plan's micro-batch. It sleeps between its calls (its weights in
        // host memory: no offload key; pricing() holds it host-resident).
        put("reward.reward_model.enable", true);
        put("reward.reward_model.model_path", model_path(in.raw_config, Role::kReward));
        put("reward.reward_model.rollout.name", "vllm");
        put("reward.reward_model.rollout.tensor_model_parallel_size", reward->strategy.tp);
        if (reward->strategy.pp > 1)
          put("reward.reward_model.rollout.pipeline_model_parallel_size", reward->strategy.pp);
        put("reward.reward_model.rollout.max_num_batched_tokens", micro_batch * mfc("reward_inf").seq_len());
      } else {
        put("reward_model.enable", true);
        // The Megatron or FSDP reward worker this layout prices: v0.7.0 would serve the reward model by its
        // reward loop instead (reward_model.use_reward_loop defaults to true in its _generated_ppo_trainer.yaml).
        put("reward_model.use_reward_loop", false);
        put("reward_model.strategy", strategy);
        put("reward_model.model.path", model_path(in.raw_config, Role::kReward));
        put("reward_model.micro_batch_size_per_gpu", micro_batch);
        layout("reward_model", reward->strategy, false, g.model(Role::kReward).spec.is_moe(), "");
        if (offloaded(plan, Role::kReward))
          put(on_fsdp ? "reward_model.model.fsdp_config.param_offload"
                      : "reward_model.megatron.param_offload",
              true);
      }
    }
    const NodeShape trainer = node_shape(actor.mesh, c);
    put("trainer.nnodes", trainer.nodes);
    put("trainer.n_gpus_per_node", trainer.gpus_per_node);
    put("trainer.logger", "[\"console\"]");
    if (async(g)) {
      const NodeShape rollout = node_shape(gen.mesh, c);
      put("actor_rollout_ref.rollout.mode", "async");
      put("actor_rollout_ref.rollout.calculate_log_probs", true);
      put("data.gen_batch_size", 1);
      put("rollout.nnodes", rollout.nodes);
      put("rollout.n_gpus_per_node", rollout.gpus_per_node);
      // One realign iteration = one batch of `prompts` in mini_batches optimizer steps, then a weight sync.
      put("async_training.require_batches", 1);
      put("async_training.trigger_parameter_sync_step", train.mini_batches);
      // The rollouter makes at most (1 + threshold) batches' samples between two syncs: staleness N with a
      // share f of the Nth batch ahead is N - 1 + f (verl_reader.cc reads it back so).
      const bool partial = g.mfcs[size_t(g.mfc_index("actor_gen"))].generation.partial_rollout;
      if (g.staleness_share < 1)
        put("async_training.staleness_threshold", double(g.staleness) - 1 + g.staleness_share);
      else
        put("async_training.staleness_threshold", g.staleness);
      put("async_training.partial_rollout", partial);
    }
    keep_workload(e, in.workload);
    return e;
  }

  std::vector<LaunchFile> launch_files(const WriteInput& in, const ExecutionPlan& plan) const override {
    const auto entries = write_config(in, plan);
    std::vector<std::string> args;
    std::string command;
    const bool on_fsdp = writes(entries, "actor_rollout_ref.actor.strategy", "fsdp");
    if (async(*in.graph)) {
      command = "python3 -m " + release_.fully_async_module;
      args = {"--config-path=config",
              std::string("--config-name=") +
                  (on_fsdp ? "fully_async_ppo_trainer.yaml" : "fully_async_ppo_megatron_trainer.yaml")};
    } else {
      command = "python3 -m verl.trainer.main_ppo";
      args = {std::string("--config-name=") + (on_fsdp ? "ppo_trainer" : "ppo_megatron_trainer")};
    }
    for (const auto& e : entries) args.push_back(e.key + "=" + shell_value(e.value));
    return {{"launch.sh",
             launch_script(*this,
                           "veRL " + std::string(async(*in.graph) ? "fully_async" : "hybrid engine") +
                               " run planned by realign",
                           entries, command, args),
             true}};
  }

  ReadRun read_run(const std::string& script, const std::string& file,
                   const std::map<std::string, std::string>& env) const override {
    // The reader reads v0.7.0's reward worker: a reward-loop launch's keys are spelled so, and what it says
    // spelled back.
    HydraLaunch launch = read_hydra_launch(script, file, env, kVerlConfigs);
    const std::vector<ConfigEntry> written = launch.entries;
    const ReaderLaunch read = as_reader_reward_keys(std::move(launch));
    return read_as_written(written, read.user_names, [&] { return read_verl_run(read.launch); });
  }

  std::vector<std::string> describe(const DataflowGraph& g, const ExecutionPlan& plan) const override {
    const MfcAssignment& gen = plan.assignments[size_t(g.mfc_index("actor_gen"))];
    const MfcAssignment& actor = plan.assignments[size_t(g.mfc_index("actor_train"))];
    std::vector<std::string> out;
    const bool moe = g.model(Role::kActor).spec.is_moe();
    const std::string rollout =
        std::string(async(g) ? "rollout (vLLM, fully_async)" : "rollout (vLLM, hybrid engine)") + ": " +
        std::to_string(gen.mesh.size) + " GPUs, ";
    if (gen.strategy.ep > 1)
      out.push_back(rollout + std::to_string(gen.mesh.size / gen.strategy.ep) + " servers x (data parallel " +
                    std::to_string(vllm_data_parallel(gen.strategy)) + " x tensor parallel " +
                    std::to_string(gen.strategy.tp) + "), experts over " + std::to_string(gen.strategy.ep) +
                    " GPUs");
    else
      out.push_back(rollout + std::to_string(gen.strategy.dp) + " replicas x tensor parallel " +
                    std::to_string(gen.strategy.tp) + (moe ? ", no expert parallelism" : ""));
    std::string roles = "actor";
    if (g.mfc_index("critic_train") >= 0) roles += ", critic";
    roles += ", ref";
    if (g.mfc_index("reward_inf") >= 0) roles += ", reward model";
    out.push_back(roles + ": " + std::to_string(actor.mesh.size) + " GPUs, tp " +
                  std::to_string(actor.strategy.tp) + " x pp " + std::to_string(actor.strategy.pp) +
                  " x dp " + std::to_string(actor.strategy.dp) +
                  (actor.strategy.cp > 1 ? " x cp " + std::to_string(actor.strategy.cp) : "") +
                  (moe ? ", expert parallel " + std::to_string(actor.strategy.ep) : ""));
    return out;
  }

 private:
  static bool offloaded(const ExecutionPlan& plan, Role model) {
    return std::count(plan.offload.begin(), plan.offload.end(), model) > 0;
  }
  // <prefix>.megatron.{tensor,pipeline}_model_parallel_size, for a mixture of experts how its experts spread,
  // and for a trained role the distributed optimizer and full recomputation.
  static void megatron(std::vector<ConfigEntry>& e, const std::string& prefix, const Strategy& s,
                       bool trained, bool moe) {
    e.push_back({prefix + ".megatron.tensor_model_parallel_size", s.tp});
    e.push_back({prefix + ".megatron.pipeline_model_parallel_size", s.pp});
    if (s.cp > 1) e.push_back({prefix + ".megatron.context_parallel_size", s.cp});
    if (moe) {
      e.push_back({prefix + ".megatron.expert_model_parallel_size", s.ep});
      e.push_back({prefix + ".megatron.expert_tensor_parallel_size", megatron_expert_tp(s)});
    }
    if (!trained) return;
    e.push_back({prefix + ".megatron.use_distributed_optimizer", s.zero1});
    if (s.recompute) {
      e.push_back({prefix + ".megatron.override_transformer_config.recompute_granularity", "full"});
      e.push_back({prefix + ".megatron.override_transformer_config.recompute_method", "uniform"});
      e.push_back({prefix + ".megatron.override_transformer_config.recompute_num_layers", 1});
    }
  }
  Release release_;
};

}  // namespace

std::unique_ptr<Engine> make_verl(const Release& release) { return std::make_unique<Verl>(release); }

}  // namespace realign::engines
