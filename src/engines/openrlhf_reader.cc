// A user's OpenRLHF launch script (`python3 -m openrlhf.cli.train_ppo_ray --flag value ...`, often behind
// `ray job submit ... --`) read back into a realign config and plan: the inverse of the OpenRLHF writer
// (openrlhf.cc), with train_ppo_ray.py's argparse defaults for the flags a script leaves out.
#include <algorithm>
#include <optional>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/placements.h"
#include "engines/script_reader.h"

namespace realign::engines {
namespace {

// Estimators whose dataflow is GRPO's (no critic): group_norm is GRPO; the others baseline within the group
// or the batch the same calls.
const std::vector<std::string> kCriticFree = {"group_norm", "rloo", "reinforce", "reinforce_baseline",
                                              "dr_grpo"};

// A role's GPUs: --<role>_num_nodes x --<role>_num_gpus_per_node.
int role_gpus(const LaunchSettings& s, const std::string& role) {
  return int(s.integer("--" + role + "_num_nodes", 1) * s.integer("--" + role + "_num_gpus_per_node", 8));
}

}  // namespace

ReadRun read_openrlhf_run(const std::vector<ConfigEntry>& entries) {
  const LaunchSettings s(entries);
  ReadRun run;
  auto note = [&](const std::string& k, const std::string& text) { run.notes.push_back(k + ": " + text); };
  if (!s.has("--vllm_num_engines"))
    throw Error("--vllm_num_engines", "not set; realign prices OpenRLHF with vLLM engines for generation");
  for (const char* k : {"--ds_tensor_parallel_size", "--ring_attn_size"})
    if (s.integer(k, 1) > 1) throw Error(k, "not priced by realign (DeepSpeed data parallelism only)");
  if (s.integer("--lora_rank", 0) > 0) throw Error("--lora_rank", "LoRA training is not priced by realign");
  const std::string estimator = s.text("--advantage_estimator", "gae");
  // realign prices every critic-free estimator as GRPO's dataflow; the config written keeps the script's.
  run.workload.push_back({"--algo.advantage.estimator", estimator});
  const bool ppo = estimator == "gae";
  if (!ppo && std::find(kCriticFree.begin(), kCriticFree.end(), estimator) == kCriticFree.end())
    throw Error("--advantage_estimator", "'" + estimator +
                                             "'; realign prices gae (PPO) and the critic-free estimators "
                                             "group_norm, rloo, reinforce, reinforce_baseline and dr_grpo");
  if (!ppo && estimator != "group_norm")
    note("--advantage_estimator", estimator + " priced as GRPO's dataflow (the same calls, no critic)");

  // The workload.
  const int64_t prompts = s.integer("--rollout_batch_size", 1024);
  const int64_t n = s.integer("--n_samples_per_prompt", 1);
  const int64_t per_step = s.integer("--train_batch_size", 128);
  if (per_step < 1 || (prompts * n) % per_step != 0)
    throw Error("--train_batch_size",
                std::to_string(per_step) + " samples per optimizer step do not divide the " +
                    std::to_string(prompts * n) + " of --rollout_batch_size x " + "--n_samples_per_prompt");
  // reinforce (REINFORCE++) normalises advantages over the whole batch, so one sample a prompt is valid
  // (train_ppo_ray.py asserts n > 1 only for rloo, reinforce_baseline, group_norm and dr_grpo;
  // experience_maker.py normalises reinforce's across all experiences). realign's GRPO graph, whose calls
  // it runs, needs groups of two: the same sequences are priced as half the prompts twice (the calls' costs
  // depend on the sequences alone).
  int64_t graph_prompts = prompts, graph_n = n;
  if (estimator == "reinforce" && n == 1) {
    if (prompts % 2 != 0)
      throw Error(
          "--rollout_batch_size",
          std::to_string(prompts) +
              " with --n_samples_per_prompt 1: realign prices reinforce as GRPO's dataflow over pairs "
              "of samples, which needs an even number of prompts");
    graph_prompts = prompts / 2, graph_n = 2;
    // The config written for the same workload keeps the script's one sample a prompt.
    run.workload.push_back({"--rollout.n_samples_per_prompt", 1});
    run.workload.push_back({"--rollout.batch_size", prompts});
    note(
        "--n_samples_per_prompt",
        "1 with reinforce (batch-normalised advantages): priced as GRPO's dataflow over the same " +
            std::to_string(prompts) + " sequences, as " + std::to_string(graph_prompts) +
            " prompts x 2 samples (realign's GRPO needs groups of two; the calls' costs are the sequences')");
  }
  Json& c = run.config;
  c["algorithm"] = ppo ? "ppo" : "grpo";
  auto model = [&](const std::string& role, const std::string& k) {
    read_model(run, role, k, s.text(k, ""));
  };
  if (!s.has("--pretrain")) throw Error("--pretrain", "not set: the actor's model");
  model("actor", "--pretrain");
  if (ppo) {
    // Left out, the critic starts from the reward model (its first path), or from the actor's model with a
    // remote reward (train_ppo_ray.py, after parsing).
    if (s.has("--critic_pretrain")) {
      model("critic", "--critic_pretrain");
    } else {
      const bool remote = s.has("--remote_rm_url");
      if (!remote && !s.has("--reward_pretrain"))
        throw Error("--critic_pretrain",
                    "not set, nor --reward_pretrain it defaults to: PPO's critic (gae) needs a model");
      const std::string from = remote ? "--pretrain" : "--reward_pretrain";
      const std::string path = s.text(from, "");
      read_model(run, "critic", from, path.substr(0, path.find(',')));
      note("--critic_pretrain", "not set: the critic starts from " + from + " (OpenRLHF's default)");
    }
  }
  const bool reward_model = s.has("--reward_pretrain") && !s.has("--remote_rm_url");
  if (reward_model) model("reward", "--reward_pretrain");
  c["batch"] = {{"prompts", graph_prompts},
                {"samples_per_prompt", graph_n},
                {"prompt_len", s.integer("--prompt_max_len", 1024)},
                {"gen_len", s.integer("--generate_max_len", 1024)},
                {"gen_len_max", s.integer("--generate_max_len", 1024)},
                {"mini_batches", prompts * n / per_step},
                {"epochs", s.integer("--max_epochs", 1)}};
  c["reward"]["kind"] = reward_model ? "model" : "verifier";
  run.sources.insert({{"algorithm", "--advantage_estimator"},
                      {"batch.prompts", "--rollout_batch_size"},
                      {"batch.samples_per_prompt", "--n_samples_per_prompt"},
                      {"batch.prompt_len", "--prompt_max_len"},
                      {"batch.gen_len", "--generate_max_len"},
                      {"batch.gen_len_max", "--generate_max_len"},
                      {"batch.mini_batches", "--train_batch_size"},
                      {"batch.epochs", "--max_epochs"}});
  if (s.flag("--async_train", false)) c["train"]["staleness"] = s.integer("--async_queue_size", 1);
  run.sources["train.staleness"] = "--async_queue_size";
  // OpenRLHF builds the reference model only for a KL coefficient above 0 (cli/train_ppo_ray.py: `if
  // args.algo.kl.init_coef > 0`), used in the reward or, with --use_kl_loss, as a loss term.
  const double kl_coef = s.number("--init_kl_coef", 0.01);
  if (kl_coef <= 0) {
    c["models"]["ref"] = kNoReference;
    run.sources["models.ref"] = "--init_kl_coef";
    note("--init_kl_coef",
         "0: no KL term, so OpenRLHF builds no reference model: priced without one "
         "(models.ref: none)");
  } else {
    c["train"]["ppo"]["kl_mode"] = s.flag("--use_kl_loss", false) ? "loss" : "reward";
    c["train"]["ppo"]["kl_coef"] = kl_coef;
    run.sources["train.ppo.kl_coef"] = "--init_kl_coef";
  }
  if (s.flag("--enforce_eager", false)) note("--enforce_eager", kEagerDecodingNote);
  for (const char* k : {"--adam_offload", "--ref_reward_offload"})
    if (s.flag(k, false)) note(k, "priced without offloading");

  // The cluster: the GPUs of the groups the flags describe, in nodes of the roles' largest per-node count.
  const bool all = s.flag("--colocate_all_models", false);
  const int gen_gpus = int(s.integer("--vllm_num_engines", 1) * s.integer("--vllm_tensor_parallel_size", 1));
  const int actor = role_gpus(s, "actor"),
            critic = ppo || reward_model ? role_gpus(s, ppo ? "critic" : "reward") : 0;
  // Colocated, vLLM shares the actor's GPUs, except with --async_train (vLLM apart, the DeepSpeed models
  // together).
  const bool async = s.flag("--async_train", false);
  const int total = all ? (async ? gen_gpus + actor : actor) : gen_gpus + actor + critic;
  // The node size is the Ray cluster's, not in the script: 8 GPUs (at least the roles' per-node counts),
  // or one node holding them all.
  int per_node = 8;
  for (const char* role : {"actor", "ref", "critic", "reward"})
    per_node = std::max<int>(per_node, int(s.integer(std::string("--") + role + "_num_gpus_per_node", 8)));
  if (total % per_node != 0) per_node = total;
  note("cluster.devices_per_node",
       "the node size is not in the script: " + std::to_string(per_node) +
           " GPUs per node (pass cluster.devices_per_node and cluster.nodes for another)");
  run.sources.insert(
      {{"cluster.nodes", "--actor_num_nodes"}, {"cluster.devices_per_node", "--actor_num_gpus_per_node"}});
  c["cluster"] = {{"nodes", total / per_node}, {"devices_per_node", per_node}};
  c["plan"] = {{"mode", "search"}, {"seed", 1}, {"time_budget_s", 5}};

  // The layout: the engine's placement whose switches and group sizes the flags give.
  run.options = {{"zero_stage", s.integer("--zero_stage", 2)},
                 {"gradient_checkpointing", s.flag("--gradient_checkpointing", false)},
                 {"colocate_all_models", all}};
  run.plan = [s, all, gen_gpus, actor, critic, want = run.options](
                 const DataflowGraph& g, const Cluster& cluster, std::vector<std::string>&) {
    const int gen = g.mfc_index("actor_gen"), train = g.mfc_index("actor_train");
    const int second = g.mfc_index(g.mfc_index("critic_train") >= 0 ? "critic_train" : "reward_inf");
    std::optional<Placement> chosen;
    for (const Placement& p : make_engine("openrlhf")->placements(g, cluster))
      if (has_options(p, want) && p.meshes[size_t(gen)].size == gen_gpus &&
          p.meshes[size_t(train)].size == actor &&
          (all || second < 0 || p.meshes[size_t(second)].size == critic)) {
        chosen = p;
        break;
      }
    if (!chosen)
      throw Error(
          all ? "--colocate_all_models" : "--colocate_actor_ref",
          "realign prices OpenRLHF's documented layouts: --colocate_all_models (vLLM on the actor's GPUs), "
          "or vLLM apart with --colocate_actor_ref and --colocate_critic_reward; this script's groups "
          "(vLLM " +
              std::to_string(gen_gpus) + " GPUs, actor " + std::to_string(actor) + ", critic/reward " +
              std::to_string(critic) + ") are not one of them");
    ExecutionPlan plan;
    plan.name = "script";
    for (size_t i = 0; i < g.mfcs.size(); ++i) {
      const Mfc& m = g.mfcs[i];
      const DeviceMesh mesh = chosen->meshes[i];
      Strategy st;
      if (m.kind() == MfcKind::kGenerate) {
        st.tp = int(s.integer("--vllm_tensor_parallel_size", 1));
        st.dp = mesh.size / st.tp;
      } else {
        st.dp = mesh.size;
        const bool training = m.kind() == MfcKind::kTrain;
        const std::string k = training ? "--micro_train_batch_size" : "--micro_rollout_batch_size";
        st.micro_batches = micro_batches_of(k, m.seqs_per_pass(), st.dp, s.integer(k, 8));
        if (training) st.zero1 = st.dp > 1, st.recompute = s.flag("--gradient_checkpointing", false);
      }
      plan.assignments.push_back({m.name, mesh, st});
    }
    return plan;
  };
  return run;
}

}  // namespace realign::engines
