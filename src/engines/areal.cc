// AReaL (inclusionAI/AReaL): generation on its own GPUs (SGLang, data x tensor parallel) apart from the
// training engine (Megatron, data x pipeline x tensor; or FSDP, data x tensor), the two written as one
// allocation_mode ("sglang:d4p1t2+megatron:d2p2t2", "sglang:d4p1t1+fsdp:d4p1t1"), or on one node both on all
// its GPUs taking turns ("sglang[rollout]:d8p1t1|fsdp[actor]:d8p1t1", on-policy); critic and reference
// colocated with the actor; at most rollout.max_head_offpolicyness versions between the weights that generate
// and those that train.
#include <algorithm>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/expert_rules.h"
#include "engines/launch_config.h"
#include "engines/placements.h"
#include "engines/write_helpers.h"

namespace realign::engines {

namespace {

constexpr const char* kExample = "inclusionAI/AReaL examples/math/gsm8k_ppo_megatron.yaml";
constexpr const char* kAlloc = "inclusionAI/AReaL areal/api/alloc_mode.py";
constexpr const char* kArgs = "inclusionAI/AReaL areal/api/cli_args.py";
constexpr const char* kColocated = "inclusionAI/AReaL examples/math/gsm8k_grpo_colocated.yaml";

const std::vector<std::string> kTrainCalls = {"actor_train", "actor_inf", "ref_inf", "critic_inf",
                                              "critic_train"};

// An allocation's dimensions; `e` (expert parallelism, expert tensor parallelism 1) only when ep > 1, as
// alloc_mode.py writes it.
std::string dims(const Strategy& s) {
  return "d" + std::to_string(s.dp) + "p" + std::to_string(s.pp) + "t" + std::to_string(s.tp) +
         (s.ep > 1 ? "e" + std::to_string(s.ep) : "");
}

// The tokens of one micro-batch of `call` at the lengths' caps: as mb_spec.max_tokens_per_mb (n_mbs left at
// its default 1), AReaL splits a rank's sequences into the plan's micro-batches.
int64_t micro_batch_tokens(const DataflowGraph& g, const ExecutionPlan& plan, const std::string& call) {
  const size_t i = size_t(g.mfc_index(call));
  const Mfc& m = g.mfcs[i];
  const Strategy& s = plan.assignments[i].strategy;
  const int64_t seqs = m.seqs_per_pass() / s.dp;
  return seqs / s.micro_batches * m.seq_len();
}

class Areal : public Engine {
 public:
  explicit Areal(Release release) : release_(std::move(release)) {}
  std::string name() const override { return "areal"; }
  std::string display_name() const override { return "AReaL"; }
  const Release& release() const override { return release_; }

  std::vector<Rule> rules() const override {
    return {
        {"Generation and training take separate GPUs: allocation_mode '<gen>:dXpYtZ+<train>:dXpYtZ' ('+' "
         "disaggregates), here sglang for generation and megatron for training" +
             std::string(release_.per_engine_backend
                             ? "; each engine's own backend field gives the same (rollout.backend, "
                               "actor.backend, critic.backend, ref.backend: required from v1.0.3)"
                             : ""),
         kAlloc},
        {"Critic and reference run on the actor's GPUs in the actor's engine layout (critic/ref "
         "scheduling_strategy: colocation, target: actor): one training allocation for every trained or "
         "inferred model",
         kExample},
        {"realign proposes SGLang generation with data and tensor parallelism only (p1)", kAlloc},
        {"Megatron pipeline stages hold equal numbers of layers: pp divides the layers", kAlloc},
        {"Megatron training may spread a mixture of experts' experts: 'megatron:dXpYtZeE' sets "
         "expert_parallel_size E with expert_tensor_parallel_size 1 (MoE parallel folding; E x pp divides "
         "the allocation's GPUs), realign's ep; critic and reference colocated in the actor's layout share "
         "it",
         kAlloc},
        {"Generation allocations ('sglang:'/'vllm:') take d, t and p only: no expert parallelism (ep 1, "
         "the experts cut by tensor parallelism)",
         kAlloc},
        {"Or colocated on one node (GPU time-sharing, 'sglang[rollout]:dXp1tZ|fsdp[actor]:dXp1tZ' with "
         "enable_offload, the rollout's scheduling_strategy colocation with the actor and weight_update_mode "
         "disk): generation and every other call on all the node's "
         "GPUs, FSDP training, on-policy only (max_head_offpolicyness 0); the training side's state "
         "offloaded and reloaded around generation every iteration",
         kColocated},
        {"Rewards are functions: the configs read have no reward-model role, so a reward model is not "
         "proposed",
         kExample},
        {"rollout.max_head_offpolicyness bounds how many versions generation may run ahead: train.staleness",
         kExample},
        {"Megatron's distributed optimizer is not a key realign found in AReaL's config: training is priced "
         "without ZeRO-1",
         kExample},
        {"One micro-batch spec per engine (mb_spec, written as max_tokens_per_mb at the lengths' caps): the "
         "actor computes log-probs with its training micro-batch size, the critic its values likewise",
         kArgs},
        {"Or FSDP ('fsdp:dXpYtZ'; it refuses e): weights, gradients and optimizer state sharded over the "
         "allocation's dp ranks, priced as ZeRO-3; realign proposes it without pipeline parallelism and for "
         "dense models only",
         kAlloc},
    };
  }

  void check_graph(const DataflowGraph& g, const Cluster& c) const override {
    if (g.algorithm != Algorithm::kPpo && g.algorithm != Algorithm::kGrpo)
      throw Error("algorithm",
                  "realign writes AReaL configs for ppo and grpo only, not " + to_string(g.algorithm));
    if (g.mfc_index("reward_inf") >= 0)
      throw Error("reward.kind", std::string("AReaL scores with reward functions; the configs read (") +
                                     kExample +
                                     ") have no reward-model role: set reward.kind: verifier or command");
    if (g.mfc_index("actor_inf") < 0)
      throw Error(
          "train.ppo.behaviour_logprobs",
          "AReaL's decoupled objective recomputes log-probs (actor.recompute_logprob); set it to recompute");
    if (c.n_devices() < 2 && g.staleness > 0)
      throw Error("cluster", "AReaL needs separate GPUs for asynchronous generation and training");
  }

  std::vector<Placement> placements(const DataflowGraph& g, const Cluster& c) const override {
    std::vector<Placement> out;
    for (const Json& options : training_backends(g, c, "fsdp")) {
      for (const auto& m : cover_cluster(c, 2))
        out.push_back(group_placement(g, {{"actor_gen"}, present(g, kTrainCalls)}, m,
                                      "decoupled, " + options["backend"].get<std::string>(), options));
      if (options["backend"] == "fsdp" && c.n_nodes == 1 && g.staleness == 0) {
        Json colocated = options;
        colocated["colocated"] = true;
        std::vector<std::string> all = present(g, kTrainCalls);
        all.insert(all.begin(), "actor_gen");
        out.push_back(
            group_placement(g, {all}, {DeviceMesh{0, c.n_devices()}}, "colocated, fsdp", colocated));
      }
    }
    return out;
  }

  std::string strategy_problem(const DataflowGraph& g, const Placement& placement, size_t call, int,
                               const Strategy& s) const override {
    const Mfc& m = g.mfcs[call];
    if (std::string why = batch_split_problem(m, s); !why.empty()) return why;
    if (s.cp != 1) return "AReaL's context parallelism (c) is not priced by realign";
    // A server's tp may span whole nodes (areal/infra/launcher/sglang_server.py, v1.0.2:124-130: "Cross-nodes
    // SGLang only supports utilizing all gpus in one node").
    if (m.kind() == MfcKind::kGenerate)
      return s.pp == 1 && s.ep == 1
                 ? ""
                 : "SGLang generation: data and tensor parallelism only (the allocation has no e for it)";
    if (sharded_backend(placement)) return sharded_layout_problem(m, s, true);
    if (s.zero1) return "no distributed-optimizer key found in AReaL's config";
    return megatron_layout_problem(g.model(m.model).spec, s);
  }

  bool can_offload() const override { return false; }

  std::vector<std::vector<std::string>> tied(const DataflowGraph& g) const override {
    return {present(g, kTrainCalls)};
  }

  Pricing pricing(const DataflowGraph&) const override {
    Pricing p;
    p.engine = name();
    p.cuda_graph_decoding = true;
    p.cuda_graph_source =
        "SGLang captures CUDA graphs for decoding unless disabled (not read in AReaL's config)";
    p.broadcast_weight_sync = true;
    p.weight_sync_source =
        "not read in AReaL's source: priced as veRL's and OpenRLHF's NCCL broadcast from one training rank";
    p.micro_batch_size_from = {{"actor_inf", "actor_train"}, {"critic_inf", "critic_train"}};
    p.micro_batch_size_source =
        std::string(kArgs) + ": one MicroBatchSpec per engine (PPOActorConfig.mb_spec)";
    return p;
  }

  std::vector<ConfigEntry> write_config(const WriteInput& in, const ExecutionPlan& plan) const override {
    const DataflowGraph& g = *in.graph;
    const Cluster& c = *in.cluster;
    auto at = [&](const std::string& call) -> const MfcAssignment* {
      const int i = g.mfc_index(call);
      return i < 0 ? nullptr : &plan.assignments[size_t(i)];
    };
    const Mfc& train = g.mfcs[size_t(g.mfc_index("actor_train"))];
    const MfcAssignment& gen = *at("actor_gen");
    const MfcAssignment& actor = *at("actor_train");
    std::vector<ConfigEntry> e;
    auto put = [&](const std::string& k, Json v) { e.push_back({k, std::move(v)}); };
    put("experiment_name", "realign-" + to_string(g.algorithm));
    put("trial_name", "trial0");
    put("tokenizer_path", model_path(in.raw_config, Role::kActor));
    put("cluster.n_nodes", c.n_nodes);
    put("cluster.n_gpus_per_node", c.devices_per_node);
    const Placement placement = written_placement(*this, in, plan);
    const std::string backend = sharded_backend(placement) ? "fsdp" : "megatron";
    const bool colocated = placement.options.value("colocated", false);
    if (colocated) {
      put("enable_offload", true);  // torch_memory_saver: training and SGLang take turns on the GPUs
      put("allocation_mode",
          "sglang[rollout]:" + dims(gen.strategy) + "|fsdp[actor]:" + dims(actor.strategy));
    } else {
      put("allocation_mode", "sglang:" + dims(gen.strategy) + "+" + backend + ":" + dims(actor.strategy));
    }
    // From v1.0.3 every engine names its backend (required; allocation_mode stays for the launchers that
    // read it): critic and reference in the actor's.
    const std::string train_backend = backend + ":" + dims(actor.strategy);
    if (release_.per_engine_backend) put("rollout.backend", "sglang:" + dims(gen.strategy));
    put("rollout.max_head_offpolicyness", g.staleness);
    put("rollout.consumer_batch_size", in.batch.prompts);
    put("gconfig.n_samples", in.batch.samples_per_prompt);
    put("gconfig.max_new_tokens",
        g.mfcs[size_t(g.mfc_index("actor_gen"))].max_new_tokens());  // the cap, not the mean
    put("actor.path", model_path(in.raw_config, Role::kActor));
    if (release_.per_engine_backend) put("actor.backend", train_backend);
    put("actor.gradient_checkpointing", actor.strategy.recompute);
    put("actor.mb_spec.max_tokens_per_mb", micro_batch_tokens(g, plan, "actor_train"));
    put("actor.ppo_n_minibatches", train.mini_batches);
    put("actor.recompute_logprob", true);
    put("actor.use_decoupled_loss", g.staleness > 0);
    if (colocated) {
      // Generation placed with the actor (cli_args.py SchedulingStrategy, as critic and reference are).
      put("rollout.scheduling_strategy.type", "colocation");
      put("rollout.scheduling_strategy.target", "actor");
      put("actor.weight_update_mode", "disk");  // through /dev/shm, as colocated mode requires
      put("sglang.enable_memory_saver", true);
    }
    if (const MfcAssignment* critic = at("critic_train")) {
      put("critic.path", model_path(in.raw_config, Role::kCritic));
      put("critic.is_critic", true);
      if (release_.per_engine_backend) put("critic.backend", train_backend);
      put("critic.gradient_checkpointing", critic->strategy.recompute);
      put("critic.mb_spec.max_tokens_per_mb", micro_batch_tokens(g, plan, "critic_train"));
      put("critic.scheduling_strategy.type", "colocation");
      put("critic.scheduling_strategy.target", "actor");
    }
    // AReaL computes the reference's log-probs only for a KL term in the reward (rl_trainer.py: actor.kl_ctl
    // > 0 and a ref section): the plan's reference call written as one, with realign's coefficient.
    put("actor.kl_ctl", written_kl_coef(in));
    if (g.mfc_index("ref_inf") >= 0) {
      put("ref.path", model_path(in.raw_config, Role::kRef));
      if (release_.per_engine_backend) put("ref.backend", train_backend);
      put("ref.mb_spec.max_tokens_per_mb", micro_batch_tokens(g, plan, "ref_inf"));
      put("ref.scheduling_strategy.type", "colocation");
      put("ref.scheduling_strategy.target", "actor");
    }
    put("train_dataset.path", train_data(in.raw_config));
    put("train_dataset.batch_size", in.batch.prompts);
    put("train_dataset.max_length", train.prompt_len);
    return e;
  }

  std::vector<LaunchFile> launch_files(const WriteInput& in, const ExecutionPlan& plan) const override {
    auto entries = write_config(in, plan);
    // OmegaConf reads environment variables as ${oc.env:NAME}.
    for (auto& e : entries)
      if (e.value.is_string()) {
        std::string v = e.value.get<std::string>();
        for (size_t at = v.find("${"); at != std::string::npos; at = v.find("${", at + 9))
          v.insert(at + 2, "oc.env:");
        e.value = v;
      }
    std::string text = "# AReaL config planned by realign (`realign plan --engine areal`) for " +
                       release_.describe(display_name()) +
                       "; see realign's docs/engines.md.\n"
                       "# Placeholders ${oc.env:NAME} are read from the environment.\n";
    return {{"config.yaml", text + nested_yaml(entries), false}};
  }

  ReadRun read_run(const std::string& script, const std::string& file,
                   const std::map<std::string, std::string>& env) const override {
    return read_areal_run(read_launch_config(script, file, env, true).entries);
  }

  std::vector<std::string> describe(const DataflowGraph& g, const ExecutionPlan& plan) const override {
    const MfcAssignment& gen = plan.assignments[size_t(g.mfc_index("actor_gen"))];
    const MfcAssignment& actor = plan.assignments[size_t(g.mfc_index("actor_train"))];
    const std::string shared = gen.mesh.overlaps(actor.mesh) ? ", taking turns with training" : "";
    return {"generation (SGLang" + shared + "): " + std::to_string(gen.mesh.size) + " GPUs " +
                to_string(gen.mesh) + ", " + dims(gen.strategy),
            "training (actor with critic and ref colocated): " + std::to_string(actor.mesh.size) + " GPUs " +
                to_string(actor.mesh) + ", " + dims(actor.strategy)};
  }

 private:
  Release release_;
};

}  // namespace

std::unique_ptr<Engine> make_areal(const Release& release) { return std::make_unique<Areal>(release); }

}  // namespace realign::engines
