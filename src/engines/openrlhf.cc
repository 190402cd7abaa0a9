// OpenRLHF (OpenRLHF/OpenRLHF) as `python3 -m openrlhf.cli.train_ppo_ray` runs it: DeepSpeed ZeRO data
// parallelism for actor, critic, reference and reward model, each on its own nodes x GPUs unless colocated,
// and vLLM engines (engines x tensor parallel) for generation; --async_train when train.staleness > 0.
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/error.h"
#include "engines/adapters.h"
#include "engines/openrlhf_flags.h"
#include "engines/placements.h"
#include "engines/script_reader.h"
#include "engines/users_words.h"
#include "engines/write_helpers.h"

namespace realign::engines {

namespace {

constexpr const char* kCli = "OpenRLHF/OpenRLHF openrlhf/cli/train_ppo_ray.py";
constexpr const char* kVllmEngine = "OpenRLHF/OpenRLHF openrlhf/trainer/ray/vllm_engine.py";

bool async(const DataflowGraph& g) { return g.staleness > 0; }

class OpenRlhf : public Engine {
 public:
  explicit OpenRlhf(Release release) : release_(std::move(release)) {}
  std::string name() const override { return "openrlhf"; }
  std::string display_name() const override { return "OpenRLHF"; }
  const Release& release() const override { return release_; }

  std::vector<Rule> rules() const override {
    std::vector<Rule> rules = {
        {"Each role runs on its own --<role>.num_nodes x --<role>.num_gpus_per_node GPUs (actor, ref, "
         "critic, reward), generation on --vllm.num_engines vLLM engines of --vllm.tensor_parallel_size GPUs "
         "each",
         kCli},
        {"--train.colocate_actor_ref puts actor and reference on the same GPUs (equal node and GPU counts "
         "asserted); --train.colocate_critic_reward the same for critic and reward model",
         kCli},
        {"--train.colocate_all puts every model and the vLLM engines on the same GPUs, asserting actor GPUs "
         "== vllm.num_engines x vllm.tensor_parallel_size; with --train.async_enable it colocates the "
         "DeepSpeed models only",
         kCli},
        {"Training and inference are DeepSpeed ZeRO data parallel (--ds.zero_stage 2 or 3): realign "
         "proposes no tensor or pipeline parallelism for them (--ds.tensor_parallel_size stays 1); ZeRO-2 "
         "also shards the gradients over dp, ZeRO-3 the weights too, with its all-gathers before each "
         "micro-batch's passes (engines/pricing.h)",
         kCli},
        {"vLLM engines have tensor parallelism only: no pipeline-parallel generation", kCli},
        {"--actor.gradient_checkpointing_enable is one switch for actor and critic (ppo_critic.py reads the "
         "actor's)",
         kCli},
        {"No expert parallelism in training: the flags have DeepSpeed ZeRO, --ds.tensor_parallel_size and "
         "--ds.ring_attn_size, and --actor.aux_loss_coef for a mixture of experts, no expert-parallel size; "
         "the experts are ZeRO-sharded dense parameters (ep 1)",
         kCli},
        {"No expert parallelism in generation: create_vllm_engines builds each vLLM engine with "
         "tensor_parallel_size only (no enable_expert_parallel, no data_parallel_size): ep 1, the experts "
         "cut by the engine's tensor parallelism",
         kVllmEngine},
        {"The reference policy is loaded from --actor.model_name_or_path, the actor's checkpoint: models.ref "
         "must be the actor's",
         kCli},
        {"Reference and reward offloading (--ref.offload, --reward.offload) is not proposed", kCli},
        {"realign proposes the documented layouts: --train.colocate_all, or vLLM apart with actor+ref and "
         "critic+reward colocated (other splits are legal but not searched)",
         kCli},
        {"With train.staleness > 0: --train.async_enable, vLLM on its own GPUs, at most "
         "--train.async_queue_size batches generated ahead",
         kCli},
    };
    // In the release's own flags (an earlier release's flat names).
    for (Rule& r : rules) r.text = in_users_words(r.text, release_.flag_names);
    return rules;
  }

  void check_graph(const DataflowGraph& g, const Cluster&) const override {
    if (g.algorithm != Algorithm::kPpo && g.algorithm != Algorithm::kGrpo)
      throw Error("algorithm",
                  "realign writes OpenRLHF configs for ppo and grpo only, not " + to_string(g.algorithm));
    if (g.mfc_index("actor_inf") < 0)
      throw Error("train.ppo.behaviour_logprobs",
                  "OpenRLHF recomputes the behaviour log-probs with the actor; set it to recompute");
    if (g.has_model(Role::kRef) && !(g.model(Role::kRef).spec == g.model(Role::kActor).spec))
      throw Error("models.ref", "OpenRLHF loads the reference from " +
                                    in_users_words("--actor.model_name_or_path", release_.flag_names) + " (" +
                                    kCli + "): models.ref must be the actor's model, or none");
  }

  std::vector<Placement> placements(const DataflowGraph& g, const Cluster& c) const override {
    // The layouts OpenRLHF documents: every model and vLLM on the same GPUs (--colocate_all_models), or vLLM
    // apart with actor+ref and critic+reward colocated; each with ZeRO-2 or ZeRO-3, with or without
    // gradient checkpointing. (Five separate groups are legal too; realign does not propose them.)
    std::vector<Placement> out;
    const bool critic = g.mfc_index("critic_train") >= 0, reward = g.mfc_index("reward_inf") >= 0;
    std::vector<std::vector<std::string>> groups = {{"actor_gen"}, {"actor_train", "actor_inf", "ref_inf"}};
    if (critic || reward) groups.push_back({"critic_inf", "critic_train", "reward_inf"});
    const auto separate = cover_cluster(c, int(groups.size()));
    const auto two = cover_cluster(c, 2);
    for (const int zero : {2, 3})
      for (const bool gc : {false, true}) {
        const Json base = {{"zero_stage", zero}, {"gradient_checkpointing", gc}};
        Json all = base;
        all["colocate_all_models"] = true;
        if (!async(g)) {
          const DeviceMesh whole{0, c.n_devices()};
          out.push_back(group_placement(g, {{"actor_gen"}, all_deepspeed(g)}, {whole, whole},
                                        "colocate_all_models", all));
        } else {
          for (const auto& m : two)
            out.push_back(group_placement(g, {{"actor_gen"}, all_deepspeed(g)}, m,
                                          "vLLM apart, DeepSpeed models colocated", all));
        }
        Json apart = base;
        apart["colocate_actor_ref"] = true;
        apart["colocate_critic_reward"] = critic && reward;
        for (const auto& m : separate)
          out.push_back(group_placement(g, groups, m,
                                        critic && reward
                                            ? "vLLM apart, colocate_actor_ref, colocate_critic_reward"
                                            : "vLLM apart, colocate_actor_ref",
                                        apart));
      }
    return out;
  }

  std::string strategy_problem(const DataflowGraph& g, const Placement& p, size_t call, int,
                               const Strategy& s) const override {
    const Mfc& m = g.mfcs[call];
    if (std::string why = batch_split_problem(m, s); !why.empty()) return why;
    if (s.ep != 1)
      return "OpenRLHF has no expert parallelism (DeepSpeed ZeRO training, vLLM engines of tp only)";
    if (s.cp != 1) return "OpenRLHF's ring attention (ring_attn_size) is not priced by realign";
    if (m.kind() == MfcKind::kInference && m.n_seqs / micro_batch_per_gpu(m, s) < int64_t(s.dp))
      return "fewer sample batches than the role's processes (train_ppo_ray.py asserts it)";
    // An engine's tp may span whole nodes: tp > 1 runs vLLM's Ray executor (vllm_engine.py at 3c3be62:242) on
    // bundles of the shared placement group taken node by node (trainer/ray/utils.py:7-17).
    if (m.kind() == MfcKind::kGenerate) return s.pp == 1 ? "" : "vLLM engines have tensor parallelism only";
    if (s.tp != 1 || s.pp != 1) return "DeepSpeed ZeRO data parallelism only (tp 1, pp 1)";
    if (m.kind() == MfcKind::kTrain) {
      if (s.zero1 != (s.dp > 1)) return "ZeRO-2 always shards the optimizer state over dp";
      if (s.recompute != p.options.value("gradient_checkpointing", false))
        return "--gradient_checkpointing is one switch for actor and critic";
    }
    return "";
  }

  bool can_offload() const override { return false; }

  std::vector<std::vector<std::string>> tied(const DataflowGraph& g) const override {
    std::vector<std::vector<std::string>> t = {present(g, {"actor_train", "actor_inf"})};
    if (g.mfc_index("critic_train") >= 0) t.push_back({"critic_train", "critic_inf"});
    return t;
  }

  Pricing pricing(const DataflowGraph&) const override {
    Pricing p;
    p.engine = name();
    p.cuda_graph_decoding = true;
    p.cuda_graph_source = std::string(kCli) + ": " +
                          in_users_words("--vllm.enforce_eager", release_.flag_names) +
                          " (off by default) disables CUDA graph in vLLM";
    // Separate vLLM engines get the weights by an NCCL broadcast from the actor's rank 0 (--vllm_sync_backend
    // nccl); colocated ones on the same GPUs: priced by realign's reallocation.
    p.broadcast_weight_sync = true;
    p.weight_sync_source = std::string(kCli) +
                           ": --vllm.sync_backend nccl (DeepSpeed -> vLLM weight sync; "
                           "--vllm_sync_backend before v0.10.2)";
    return p;
  }

  std::vector<ConfigEntry> write_config(const WriteInput& in, const ExecutionPlan& plan) const override {
    const DataflowGraph& g = *in.graph;
    const Cluster& c = *in.cluster;
    const Placement p = written_placement(*this, in, plan);
    auto at = [&](const std::string& call) -> const MfcAssignment* {
      const int i = g.mfc_index(call);
      return i < 0 ? nullptr : &plan.assignments[size_t(i)];
    };
    auto mfc = [&](const std::string& call) -> const Mfc& { return g.mfcs[size_t(g.mfc_index(call))]; };
    const Mfc& train = mfc("actor_train");
    const MfcAssignment& gen = *at("actor_gen");
    std::vector<ConfigEntry> e;
    auto put = [&](const std::string& k, Json v) { e.push_back({k, std::move(v)}); };
    auto nodes = [&](const std::string& role, const MfcAssignment& a) {
      const NodeShape s = node_shape(a.mesh, c);
      put("--" + role + ".num_nodes", s.nodes);
      put("--" + role + ".num_gpus_per_node", s.gpus_per_node);
    };
    // The current release's dotted flags; an earlier release's names for them at the end.
    put("--actor.model_name_or_path", model_path(in.raw_config, Role::kActor));
    if (at("critic_train")) put("--critic.model_name_or_path", model_path(in.raw_config, Role::kCritic));
    if (at("reward_inf"))
      put("--reward.model_name_or_path", model_path(in.raw_config, Role::kReward));
    else
      put("--reward.remote_url", "${REWARD_URL}");
    put("--data.prompt_dataset", train_data(in.raw_config));
    put("--algo.advantage.estimator", g.algorithm == Algorithm::kPpo ? "gae" : "group_norm");
    put("--rollout.n_samples_per_prompt", in.batch.samples_per_prompt);
    put("--rollout.batch_size", in.batch.prompts);
    put("--train.batch_size", train.n_seqs / train.mini_batches);
    put("--train.max_epochs", train.epochs);
    // The total length (prompt and response caps) and the response's cap (not the mean).
    const int64_t response = g.mfcs[size_t(g.mfc_index("actor_gen"))].max_new_tokens();
    put("--data.max_len", train.prompt_len + response);
    put("--rollout.max_new_tokens", response);
    put("--train.micro_batch_size", micro_batch_per_gpu(train, at("actor_train")->strategy));
    put("--rollout.micro_batch_size", micro_batch_per_gpu(mfc("actor_inf"), at("actor_inf")->strategy));
    put("--ds.zero_stage", p.options.value("zero_stage", 2));
    put("--ds.param_dtype", "bf16");
    if (p.options.value("gradient_checkpointing", false)) put("--actor.gradient_checkpointing_enable", true);
    nodes("actor", *at("actor_train"));
    // OpenRLHF builds the reference only for a KL coefficient above 0 (cli/train_ppo_ray.py), used in the
    // reward or, with use_loss, as a loss term: the plan's reference call written as one, none as 0.
    put("--algo.kl.init_coef", written_kl_coef(in));
    if (const MfcAssignment* ref = at("ref_inf")) {
      nodes("ref", *ref);
      if (in.kl_in_loss) put("--algo.kl.use_loss", true);
    }
    if (at("critic_train")) nodes("critic", *at("critic_train"));
    if (at("reward_inf")) nodes("reward", *at("reward_inf"));
    if (p.options.value("colocate_all_models", false)) put("--train.colocate_all", true);
    if (p.options.value("colocate_actor_ref", false)) put("--train.colocate_actor_ref", true);
    if (p.options.value("colocate_critic_reward", false)) put("--train.colocate_critic_reward", true);
    put("--vllm.num_engines", gen.strategy.dp);
    put("--vllm.tensor_parallel_size", gen.strategy.tp);
    const bool shared = gen.mesh == at("actor_train")->mesh;
    if (shared) {
      // vLLM shares the GPUs with the DeepSpeed models: its memory share is what generation needs, rounded up
      // to 5%, and it sleeps (frees its KV cache) outside generation.
      const double need =
          in.call_memory_bytes.empty()
              ? 0.5
              : in.call_memory_bytes[size_t(g.mfc_index("actor_gen"))] / c.device.memory_bytes;
      put("--vllm.gpu_memory_utilization", std::min(0.95, std::ceil(need * 20.0 + 1e-9) / 20.0));
      if (!async(g)) put("--vllm.enable_sleep", true);
    }
    if (async(g)) {
      put("--train.async_enable", true);
      put("--train.async_queue_size", g.staleness);
    }
    keep_workload(e, in.workload);
    for (ConfigEntry& entry : e) {
      const auto renamed = release_.flag_names.find(entry.key);
      if (renamed != release_.flag_names.end()) entry.key = renamed->second;
    }
    return e;
  }

  ReadRun read_run(const std::string& script, const std::string& file,
                   const std::map<std::string, std::string>& env) const override {
    // The reader reads v0.9's flat flags: a current script's are spelled so, and what it says spelled back.
    const std::vector<ConfigEntry> written = read_launch_flags(script, file, env);
    const ReaderFlags flags = as_reader_flags(written);
    return read_as_written(written, flags.user_names, [&] { return read_openrlhf_run(flags.entries); });
  }

  std::vector<LaunchFile> launch_files(const WriteInput& in, const ExecutionPlan& plan) const override {
    const auto entries = write_config(in, plan);
    std::vector<std::string> args;
    for (const auto& e : entries)
      args.push_back(e.value.is_boolean() ? e.key : e.key + " " + shell_value(e.value));
    return {{"launch.sh",
             launch_script(*this, "OpenRLHF run planned by realign (start a Ray cluster first)", entries,
                           "python3 -m openrlhf.cli.train_ppo_ray", args),
             true}};
  }

  std::vector<std::string> describe(const DataflowGraph& g, const ExecutionPlan& plan) const override {
    std::vector<std::string> out;
    const MfcAssignment& gen = plan.assignments[size_t(g.mfc_index("actor_gen"))];
    out.push_back("vLLM: " + std::to_string(gen.strategy.dp) + " engines x tensor parallel " +
                  std::to_string(gen.strategy.tp) + " on GPUs " + to_string(gen.mesh));
    for (const auto& [role, call] :
         std::vector<std::pair<std::string, std::string>>{{"actor", "actor_train"},
                                                          {"ref", "ref_inf"},
                                                          {"critic", "critic_train"},
                                                          {"reward", "reward_inf"}}) {
      const int i = g.mfc_index(call);
      if (i < 0) continue;
      const MfcAssignment& a = plan.assignments[size_t(i)];
      out.push_back(role + " (DeepSpeed ZeRO): " + std::to_string(a.mesh.size) + " GPUs " +
                    to_string(a.mesh));
    }
    return out;
  }

 private:
  static std::vector<std::string> all_deepspeed(const DataflowGraph& g) {
    return present(g, {"actor_train", "actor_inf", "ref_inf", "critic_inf", "critic_train", "reward_inf"});
  }
  Release release_;
};

}  // namespace

std::unique_ptr<Engine> make_openrlhf(const Release& release) { return std::make_unique<OpenRlhf>(release); }

}  // namespace realign::engines
