// NeMo-RL (NVIDIA-NeMo/RL) GRPO with vLLM generation and either training backend: DTensor (FSDP2 with
// tensor parallelism, its default) or Megatron. Generation colocated with the policy (its default) or on GPUs
// of its own (policy.generation.colocated.enabled: false), and async GRPO (grpo.async_grpo, generation apart)
// when train.staleness > 0. The policy workers compute the previous and the reference log-probs in the
// training layout: one layout for every call but generation.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/expert_rules.h"
#include "engines/launch_config.h"
#include "engines/placements.h"
#include "engines/write_helpers.h"
#include "plan/expert_parallel.h"

namespace realign::engines {

namespace {

// The config every override below is read from (and launched with), and the files its rules come from.
constexpr const char* kConfig = "NVIDIA-NeMo/RL examples/configs/grpo_math_1B_megatron.yaml";
constexpr const char* kBaseConfig = "NVIDIA-NeMo/RL examples/configs/grpo_math_1B.yaml";
constexpr const char* kGrpo = "NVIDIA-NeMo/RL nemo_rl/algorithms/grpo.py";
constexpr const char* kAsync = "NVIDIA-NeMo/RL docs/guides/async-grpo.md";
constexpr const char* kPolicy = "NVIDIA-NeMo/RL nemo_rl/models/policy/lm_policy.py";
constexpr const char* kVllm = "NVIDIA-NeMo/RL nemo_rl/models/generation/vllm/vllm_generation.py";
constexpr const char* kMegatronWorker = "NVIDIA-NeMo/RL nemo_rl/models/policy/megatron_policy_worker.py";
constexpr const char* kVllmBackend = "NVIDIA-NeMo/RL nemo_rl/models/generation/vllm/vllm_backend.py";
constexpr const char* kDtensorWorker = "NVIDIA-NeMo/RL nemo_rl/models/policy/dtensor_policy_worker.py";

// The calls NeMo-RL's policy workers run, in the policy's training layout.
const std::vector<std::string> kPolicyCalls = {"actor_train", "actor_inf", "ref_inf"};

bool async(const DataflowGraph& g) { return g.staleness > 0; }

// Whether a split of the cluster into generation and training GPUs is one grpo.py's setup accepts: on one
// node any split; across nodes, whole nodes each.
bool split_allowed(const std::vector<DeviceMesh>& meshes, const Cluster& c) {
  if (c.n_nodes == 1) return true;
  return std::all_of(meshes.begin(), meshes.end(),
                     [&](const DeviceMesh& m) { return m.size % c.devices_per_node == 0; });
}

class NemoRl : public Engine {
 public:
  explicit NemoRl(Release release) : release_(std::move(release)) {}
  std::string name() const override { return "nemo-rl"; }
  std::string display_name() const override { return "NeMo-RL"; }
  const Release& release() const override { return release_; }

  std::vector<Rule> rules() const override {
    return {
        {"GRPO only: the group baseline takes the critic's place (no value model in grpo.py)", kGrpo},
        {"Generation colocated with the policy on every GPU (policy.generation.colocated.enabled: true, the "
         "default) or on GPUs of its own (enabled: false, colocated.resources.gpus_per_node / num_nodes): "
         "on one node any split of its GPUs, across nodes whole nodes each; training takes the rest",
         kGrpo},
        {"Asynchronous GRPO (grpo.async_grpo.enabled, max_trajectory_age_steps = train.staleness) needs "
         "generation apart, vllm_cfg.async_engine: true and loss_fn.use_importance_sampling_correction: true",
         kAsync},
        {"The policy workers compute the previous and the reference log-probs: actor_inf and ref_inf run in "
         "the training layout, one value of policy.logprob_batch_size for both",
         kPolicy},
        {"The reference policy is the policy's starting weights, kept in host memory and swapped in for its "
         "log-probs: models.ref must be the actor's model",
         kMegatronWorker},
        {"Training is Megatron (policy.megatron_cfg): tensor_model_parallel_size, "
         "pipeline_model_parallel_size, expert_model_parallel_size, "
         "optimizer.use_distributed_optimizer (realign's ZeRO-1), activation_checkpointing; the training "
         "GPUs are pp x dp x tp",
         kPolicy},
        {"Or DTensor (policy.dtensor_cfg, the config's default): FSDP2 shards weights, gradients and "
         "optimizer state over the dp ranks of each tensor_parallel_size shard (priced as ZeRO-3: its "
         "all-gathers before each micro-batch's passes), no pipeline (dp x tp GPUs), "
         "activation_checkpointing; realign proposes it for dense models (no expert parallelism), without "
         "sequence or context parallelism",
         kDtensorWorker},
        {"realign keeps Megatron's pipeline stages equal (pp divides the layers; "
         "num_layers_in_first/last_pipeline_stage are not written)",
         kConfig},
        {"Mixture-of-experts training: expert_model_parallel_size with expert_tensor_parallel_size 1 is "
         "Megatron-Core's MoE parallel folding, realign's ep (ep divides the experts and dp x tp); with tp > "
         "1 and ep > 1 Megatron needs sequence_parallel, which the config then switches on",
         kMegatronMoeFolding},
        {"vLLM generation: engines of tensor_parallel_size x pipeline_parallel_size GPUs, as many as the "
         "generation GPUs hold; realign proposes tensor parallelism only (pipeline_parallel_size 1)",
         kVllm},
        {"vLLM expert parallelism: expert_parallel_size a multiple of tensor_parallel_size, and equal to it "
         "under the async engine; realign proposes ep 1 or ep = tp (each engine spreads whole experts over "
         "its tensor-parallel GPUs)",
         kVllm},
        {"A policy update passes over each batch once (no epochs key): batch.epochs must be 1", kConfig},
        {"Rewards come from environments (the math verifier of the config); the reward-model environment is "
         "not written: a reward model is not proposed",
         kGrpo},
    };
  }

  void check_graph(const DataflowGraph& g, const Cluster& c) const override {
    if (g.algorithm != Algorithm::kGrpo)
      throw Error("algorithm", "realign writes NeMo-RL configs for grpo only, not " + to_string(g.algorithm));
    if (g.mfc_index("reward_inf") >= 0)
      throw Error("reward.kind", std::string("NeMo-RL scores GRPO with environments; its reward-model "
                                             "environment is not written by realign (") +
                                     kGrpo + "): set reward.kind: verifier or command");
    if (g.mfc_index("actor_inf") < 0)
      throw Error("train.ppo.behaviour_logprobs",
                  "NeMo-RL recomputes the previous log-probs with the policy (get_logprobs); set it to "
                  "recompute");
    if (g.has_model(Role::kRef) && !(g.model(Role::kRef).spec == g.model(Role::kActor).spec))
      throw Error("models.ref", std::string("NeMo-RL's reference policy is the policy's starting weights (") +
                                    kMegatronWorker + "): models.ref must be the actor's model, or none");
    if (g.mfcs[size_t(g.mfc_index("actor_train"))].epochs != 1)
      throw Error("batch.epochs", "NeMo-RL's policy update passes over each batch once; set batch.epochs: 1");
    if (async(g) && c.n_devices() < 2)
      throw Error("train.staleness", "NeMo-RL's async GRPO needs generation on GPUs apart from training");
  }

  std::vector<Placement> placements(const DataflowGraph& g, const Cluster& c) const override {
    const auto policy = present(g, kPolicyCalls);
    std::vector<Placement> out;
    for (const Json& options : training_backends(g, c, "dtensor")) {
      const std::string on = std::string(", ") + options["backend"].get<std::string>();
      if (!async(g)) {
        // Colocated, the policy's state goes to host memory while vLLM generates (kMegatronWorker's
        // offload_before_refit and offload_after_refit; the DTensor workers' likewise): the engines take
        // turns.
        const DeviceMesh all{0, c.n_devices()};
        Json turns = options;
        turns["colocated"] = true;
        out.push_back(
            group_placement(g, {{"actor_gen"}, policy}, {all, all}, "colocated generation" + on, turns));
      }
      for (const auto& m : cover_cluster(c, 2, {/*all_node_runs=*/false, /*node_splits=*/true}))
        if (split_allowed(m, c))
          out.push_back(group_placement(g, {{"actor_gen"}, policy}, m,
                                        (async(g) ? "async GRPO" : "generation apart") + on, options));
    }
    return out;
  }

  std::string strategy_problem(const DataflowGraph& g, const Placement& placement, size_t call, int,
                               const Strategy& s) const override {
    const Mfc& m = g.mfcs[call];
    const ModelSpec& spec = g.model(m.model).spec;
    if (std::string why = batch_split_problem(m, s); !why.empty()) return why;
    if (m.kind() == MfcKind::kGenerate) {
      // tp may span whole nodes: a replica above a node runs on one unified placement group
      // (vllm_generation.py at 7ea279a:187-196).
      if (s.pp != 1) return "vLLM generation is proposed with tensor and data parallelism only (pp 1)";
      if (s.ep != 1 && s.ep != s.tp)
        return "vLLM expert parallelism is proposed within one engine: ep 1 or ep = tp";
      return expert_parallel_problem(spec, s.dp, s.tp, s.ep);
    }
    // Both backends split sequences over a ring (context_parallel_size); realign never proposes it.
    if (s.cp > 1 && s.cp_kind != ContextParallel::kRing)
      return "NeMo-RL's context parallelism is a ring (context_parallel_size), not Ulysses";
    if (!sharded_backend(placement))
      return megatron_layout_problem(spec, s, placement.options.value(kPipelineStageEnds, false));
    return sharded_layout_problem(m, s, true);  // DTensor: FSDP2 with tensor parallelism
  }

  // The reference's weights live in host memory between its calls (pricing's host_resident).
  bool can_offload() const override { return true; }

  std::vector<std::vector<std::string>> tied(const DataflowGraph& g) const override {
    return {present(g, kPolicyCalls)};
  }

  Pricing pricing(const DataflowGraph&) const override {
    Pricing p;
    p.engine = name();
    p.cuda_graph_decoding = true;
    p.cuda_graph_source = std::string(kBaseConfig) + ": policy.generation.vllm_cfg.enforce_eager: False";
    // Apart: an NCCL broadcast (update_weights_from_collective); colocated: CUDA IPC handles on the same
    // GPUs, which realign's reallocation prices (EngineEvaluator broadcasts only between disjoint meshes).
    p.broadcast_weight_sync = true;
    p.weight_sync_source = std::string(kVllmBackend) +
                           ": generation apart receives the weights by NCCL broadcast (collective); "
                           "colocated by CUDA IPC in place";
    p.host_resident = {Role::kRef};
    p.host_resident_source =
        std::string(kMegatronWorker) + ": the reference's state dict is kept on the CPU and swapped in";
    return p;
  }

  std::vector<ConfigEntry> write_config(const WriteInput& in, const ExecutionPlan& plan) const override {
    const DataflowGraph& g = *in.graph;
    const Cluster& c = *in.cluster;
    auto at = [&](const std::string& call) -> const MfcAssignment& {
      return plan.assignments[size_t(g.mfc_index(call))];
    };
    const Mfc& train = g.mfcs[size_t(g.mfc_index("actor_train"))];
    const Mfc& logprobs = g.mfcs[size_t(g.mfc_index("actor_inf"))];
    const MfcAssignment& gen = at("actor_gen");
    const MfcAssignment& actor = at("actor_train");
    const bool colocated = gen.mesh.overlaps(actor.mesh);
    const bool moe = g.model(Role::kActor).spec.is_moe();
    const bool fsdp = sharded_backend(written_placement(*this, in, plan));
    std::vector<ConfigEntry> e;
    auto put = [&](const std::string& k, Json v) { e.push_back({k, std::move(v)}); };
    put("cluster.num_nodes", c.n_nodes);
    put("cluster.gpus_per_node", c.devices_per_node);
    put("grpo.num_prompts_per_step", in.batch.prompts);
    put("grpo.num_generations_per_prompt", in.batch.samples_per_prompt);
    put("policy.model_name", model_path(in.raw_config, Role::kActor));
    put("policy.max_total_sequence_length",
        train.prompt_len + g.mfcs[size_t(g.mfc_index("actor_gen"))].max_new_tokens());
    put("policy.train_global_batch_size", train.n_seqs / train.mini_batches);
    const int64_t train_mb = micro_batch_per_gpu(train, actor.strategy);
    put("policy.train_micro_batch_size", train_mb);
    // lm_policy.py requires equal micro-batches for training and log-probs from tp 4 on (its accuracy
    // check); below, the log-prob calls keep their own.
    put("policy.logprob_batch_size",
        actor.strategy.tp >= 4 ? train_mb : micro_batch_per_gpu(logprobs, at("actor_inf").strategy));
    if (fsdp) {
      put("policy.dtensor_cfg.enabled", true);
      put("policy.megatron_cfg.enabled", false);
      put("policy.dtensor_cfg.tensor_parallel_size", actor.strategy.tp);
      put("policy.dtensor_cfg.context_parallel_size", actor.strategy.cp);
      put("policy.dtensor_cfg.activation_checkpointing", actor.strategy.recompute);
    } else {
      put("policy.megatron_cfg.enabled", true);
      put("policy.megatron_cfg.tensor_model_parallel_size", actor.strategy.tp);
      put("policy.megatron_cfg.pipeline_model_parallel_size", actor.strategy.pp);
      if (actor.strategy.cp > 1) put("policy.megatron_cfg.context_parallel_size", actor.strategy.cp);
      if (moe) {
        put("policy.megatron_cfg.expert_model_parallel_size", actor.strategy.ep);
        put("policy.megatron_cfg.expert_tensor_parallel_size", megatron_expert_tp(actor.strategy));
        put("policy.megatron_cfg.sequence_parallel", actor.strategy.tp > 1 && actor.strategy.ep > 1);
      }
      put("policy.megatron_cfg.activation_checkpointing", actor.strategy.recompute);
      put("policy.megatron_cfg.optimizer.use_distributed_optimizer", actor.strategy.zero1);
    }
    // NeMo-RL's KL term is a loss term (ClippedPGLossFn); at 0 it builds no reference model.
    put("loss_fn.reference_policy_kl_penalty", written_kl_coef(in));
    put("policy.generation.max_new_tokens",
        g.mfcs[size_t(g.mfc_index("actor_gen"))].max_new_tokens());  // the cap, not the mean
    put("policy.generation.vllm_cfg.tensor_parallel_size", gen.strategy.tp);
    put("policy.generation.vllm_cfg.pipeline_parallel_size", 1);
    if (moe) put("policy.generation.vllm_cfg.expert_parallel_size", gen.strategy.ep);
    if (!in.call_memory_bytes.empty()) {
      // vLLM's memory share: what generation needs (weights, KV cache), rounded up to 5%.
      const double need = in.call_memory_bytes[size_t(g.mfc_index("actor_gen"))] / c.device.memory_bytes;
      put("policy.generation.vllm_cfg.gpu_memory_utilization",
          std::min(0.95, std::ceil(need * 20.0 + 1e-9) / 20.0));
    }
    put("policy.generation.colocated.enabled", colocated);
    if (!colocated) {
      const NodeShape shape = node_shape(gen.mesh, c);
      put("policy.generation.colocated.resources.num_nodes", shape.nodes);
      put("policy.generation.colocated.resources.gpus_per_node", shape.gpus_per_node);
    }
    if (async(g)) {
      put("policy.generation.vllm_cfg.async_engine", true);
      put("loss_fn.use_importance_sampling_correction", true);
      put("grpo.async_grpo.enabled", true);
      put("grpo.async_grpo.max_trajectory_age_steps", g.staleness);
    }
    return e;
  }

  std::vector<LaunchFile> launch_files(const WriteInput& in, const ExecutionPlan& plan) const override {
    const auto entries = write_config(in, plan);
    // DTensor trains under the base config; the Megatron one also sets Megatron's optimizer and scheduler.
    const bool fsdp = writes(entries, "policy.dtensor_cfg.enabled", true);
    std::vector<std::string> args = {std::string("--config examples/configs/") +
                                     (fsdp ? "grpo_math_1B.yaml" : "grpo_math_1B_megatron.yaml")};
    for (const auto& e : entries) args.push_back(e.key + "=" + shell_value(e.value));
    return {{"launch.sh",
             launch_script(*this,
                           std::string("NeMo-RL ") + (async(*in.graph) ? "async GRPO" : "GRPO") +
                               " run planned by realign (from the root of a NeMo-RL checkout; data and "
                               "environment are the config's math ones: set data.* for yours)",
                           entries, "uv run examples/run_grpo.py", args),
             true}};
  }

  ReadRun read_run(const std::string& script, const std::string& file,
                   const std::map<std::string, std::string>& env) const override {
    return read_nemo_rl_run(read_launch_config(script, file, env, false));
  }

  std::vector<std::string> describe(const DataflowGraph& g, const ExecutionPlan& plan) const override {
    const MfcAssignment& gen = plan.assignments[size_t(g.mfc_index("actor_gen"))];
    const MfcAssignment& actor = plan.assignments[size_t(g.mfc_index("actor_train"))];
    const bool moe = g.model(Role::kActor).spec.is_moe();
    const bool colocated = gen.mesh.overlaps(actor.mesh);
    return {"generation (vLLM, " +
                std::string(colocated  ? "colocated"
                            : async(g) ? "async, apart"
                                       : "apart") +
                "): " + std::to_string(gen.mesh.size) + " GPUs, " + std::to_string(gen.strategy.dp) +
                " engines x tensor parallel " + std::to_string(gen.strategy.tp) +
                (moe ? ", expert parallel " + std::to_string(gen.strategy.ep) : ""),
            "policy (log-probs and reference in its layout): " + std::to_string(actor.mesh.size) +
                " GPUs, tp " + std::to_string(actor.strategy.tp) + " x pp " +
                std::to_string(actor.strategy.pp) + " x dp " + std::to_string(actor.strategy.dp) +
                (actor.strategy.cp > 1 ? " x cp " + std::to_string(actor.strategy.cp) : "") +
                (moe ? ", expert parallel " + std::to_string(actor.strategy.ep) : "")};
  }

 private:
  Release release_;
};

}  // namespace

std::unique_ptr<Engine> make_nemo_rl(const Release& release) { return std::make_unique<NemoRl>(release); }

}  // namespace realign::engines
