// A user's AReaL run (its YAML config, or the launch line that names it with --config and overrides keys)
// read back into a realign config and plan: the inverse of the AReaL writer (areal.cc), with the defaults of
// AReaL's dataclasses (areal/api/cli_args.py) for the keys the config leaves out. The layout is read from
// the per-engine backend strings (rollout.backend, actor.backend) or, in older configs, allocation_mode.
#include <algorithm>
#include <cctype>
#include <optional>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/placements.h"
#include "engines/script_reader.h"
#include "engines/users_words.h"

namespace realign::engines {
namespace {

// One engine's allocation: its backend and grid (realign's dp, tp, pp, ep) and context parallelism.
struct Allocation {
  std::string backend;
  Strategy grid;
  int cp = 1;
};

bool inference_backend(const std::string& b) { return b == "sglang" || b == "vllm"; }

// "d4p1t2e2": dimension letters each with its size, into `a`; `allowed` the letters this section takes.
void read_dims(const std::string& dims, const std::string& allowed, const std::string& key, Allocation& a,
               int* ffn_tp = nullptr) {
  size_t i = 0;
  while (i < dims.size()) {
    const char letter = dims[i++];
    size_t end = i;
    while (end < dims.size() && std::isdigit(static_cast<unsigned char>(dims[end]))) ++end;
    if (allowed.find(letter) == std::string::npos || end == i)
      throw Error(key, "'" + dims + "': expected dimensions such as d4p1t2 (letters " + allowed +
                           ", each with its size)");
    const int n = std::stoi(dims.substr(i, end - i));
    i = end;
    switch (letter) {
      case 'd':
        a.grid.dp = ffn_tp ? a.grid.dp : n;
        break;
      case 'p':
        if (ffn_tp && n != a.grid.pp) throw Error(key, "the ffn section's p differs from the attn section's");
        a.grid.pp = n;
        break;
      case 't':
        (ffn_tp ? *ffn_tp : a.grid.tp) = n;
        break;
      case 'c':
        a.cp = n;
        break;
      case 'e':
        a.grid.ep = n;
        break;
    }
  }
}

// One component of an allocation: "sglang:d4t2", "megatron[actor]:d2p2t2e2",
// "megatron:(attn:d1p2t4|ffn:d1p2t1e4)", or older AReaL's "sglang.d4p1t1" and bare "d4p1t1" (the backend
// auto-selected as it did then: megatron with p or e above 1, else fsdp).
Allocation read_component(std::string text, const std::string& key) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  // AReaL 0.3 wrote the backend with a dot ("sglang.d4p1t1").
  for (const char* backend : {"sglang.", "vllm.", "fsdp.", "megatron."})
    if (text.rfind(backend, 0) == 0) text[std::string(backend).size() - 1] = ':';
  Allocation a;
  const size_t colon = text.find(':');
  std::string dims = text;
  if (colon != std::string::npos && text.compare(colon - std::min<size_t>(colon, 4), 4, "attn") != 0) {
    a.backend = text.substr(0, std::min(colon, text.find('[')));
    dims = text.substr(colon + 1);
  }
  if (dims.find("attn:") != std::string::npos) {
    // MoE parallel folding: the attention's grid, the experts' ep (expert tensor parallelism 1 only).
    dims.erase(std::remove(dims.begin(), dims.end(), '('), dims.end());
    dims.erase(std::remove(dims.begin(), dims.end(), ')'), dims.end());
    const size_t bar = dims.find('|');
    if (dims.rfind("attn:", 0) != 0 || bar == std::string::npos || dims.compare(bar + 1, 4, "ffn:") != 0)
      throw Error(key, "'" + text + "': expected (attn:<dims>|ffn:<dims>)");
    read_dims(dims.substr(5, bar - 5), "dptc", key, a);
    int ffn_tp = 1;
    read_dims(dims.substr(bar + 5), "dpte", key, a, &ffn_tp);
    if (ffn_tp != 1)
      throw Error(key, "expert tensor parallelism " + std::to_string(ffn_tp) +
                           ": realign prices experts with expert tensor parallelism 1");
  } else {
    read_dims(dims, inference_backend(a.backend) ? "dpt" : "dptce", key, a);
  }
  if (a.backend.empty()) a.backend = a.grid.pp > 1 || a.grid.ep > 1 ? "megatron" : "fsdp";
  if (!inference_backend(a.backend) && a.backend != "fsdp" && a.backend != "megatron")
    throw Error(key, "backend '" + a.backend +
                         "'; realign prices sglang or vllm for generation and fsdp or "
                         "megatron for training (not archon)");
  if (a.cp > 1) throw Error(key, "context parallelism (c) is not priced by realign");
  if (a.backend == "fsdp" && a.grid.ep > 1)
    throw Error(key, "fsdp takes no expert parallelism (e); use megatron");
  return a;
}

// Generation's and training's allocations, whether they take turns on the same GPUs (colocated), and the key
// they were read from.
struct Layout {
  Allocation gen, train;
  bool colocated = false;
  std::string key;
};

Layout read_layout(const LaunchSettings& s) {
  Layout l;
  const std::string rollout = s.text("rollout.backend", ""), actor = s.text("actor.backend", "");
  if (!rollout.empty() || !actor.empty()) {
    l.key = rollout.empty() ? "rollout.backend" : "actor.backend";
    if (rollout.empty() || actor.empty())
      throw Error(l.key, "not set; realign reads rollout.backend and actor.backend together");
    for (const char* role : {"critic.backend", "ref.backend"})
      if (!s.text(role, "").empty() && s.text(role, "") != actor)
        throw Error(role,
                    "differs from actor.backend; realign prices the critic and reference in the "
                    "actor's allocation (left empty, AReaL gives them the actor's)");
    l.key = "rollout.backend", l.gen = read_component(rollout, l.key);
    l.key = "actor.backend", l.train = read_component(actor, l.key);
    // Generation scheduled with the actor takes turns with it on the same GPUs (cli_args.py SchedulingStrategy).
    l.colocated = s.text("rollout.scheduling_strategy.type", "") == "colocation" &&
                  s.text("rollout.scheduling_strategy.target", "") == "actor";
  } else {
    l.key = "allocation_mode";
    const std::string mode = s.text(l.key, "");
    if (mode.empty()) throw Error("rollout.backend", "not set (nor allocation_mode): the run's layout");
    // '+' puts engines on GPUs of their own, '|' on the same GPUs (binding tighter); MoE folding's '|' is
    // inside its section.
    std::vector<std::string> parts(1);
    int depth = 0;
    const bool folding = mode.find("attn") != std::string::npos;
    for (char c : mode) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if ((c == '+' || (c == '|' && !folding)) && depth == 0) {
        l.colocated |= c == '|';
        parts.emplace_back();
      } else {
        parts.back() += c;
      }
    }
    if (parts.size() != 2 || (l.colocated && mode.find('+') != std::string::npos))
      throw Error(l.key, "'" + mode +
                             "': realign reads one generation and one training allocation, apart "
                             "('<gen>+<train>') or colocated ('<gen>|<train>')");
    l.gen = read_component(parts[0], l.key), l.train = read_component(parts[1], l.key);
  }
  if (!inference_backend(l.gen.backend) || inference_backend(l.train.backend))
    throw Error(l.key, "expected generation (sglang or vllm) and then training (fsdp or megatron)");
  if (l.gen.grid.pp > 1) throw Error(l.key, "pipeline-parallel generation is not priced by realign");
  if (l.colocated && (l.train.backend != "fsdp" ||
                      l.gen.grid.dp * l.gen.grid.tp != l.train.grid.dp * l.train.grid.tp * l.train.grid.pp))
    throw Error(l.key,
                "colocated engines: realign prices AReaL's colocated mode with FSDP training on the "
                "GPUs generation takes (the same world size)");
  return l;
}

// Micro-batches of one call run by `role`'s engine: AReaL's mb_spec splits a rank's sequences into n_mbs
// micro-batches, more where max_tokens_per_mb caps their tokens (priced at the lengths' caps), to a count
// that divides them.
int micro_batches(const LaunchSettings& s, const std::string& role, const Mfc& m, int dp,
                  std::vector<std::string>& notes) {
  const std::string spec = role + ".mb_spec";
  const int64_t seqs = m.seqs_per_pass();
  if (seqs % dp != 0)
    throw Error(spec, std::to_string(seqs) + " sequences of " + m.name + " do not split over " +
                          std::to_string(dp) + " data-parallel ranks");
  const int64_t per_rank = seqs / dp;
  int64_t n = s.integer(spec + ".n_mbs", 1);
  if (n < 1) throw Error(spec + ".n_mbs", "must be at least 1");
  if (const int64_t tokens = s.integer(spec + ".max_tokens_per_mb", 0); tokens > 0) {
    n = std::max(n, (per_rank * m.seq_len() + tokens - 1) / tokens);
    notes.push_back(spec + ".max_tokens_per_mb: priced at the lengths' caps (" + std::to_string(m.seq_len()) +
                    " tokens a sequence) for " + m.name);
  }
  n = std::min(n, per_rank);
  while (per_rank % n != 0) ++n;
  return int(n);
}

// The engine whose mb_spec and checkpointing a call runs under.
std::string role_of(const Mfc& m) {
  if (m.model == Role::kCritic) return "critic";
  if (m.model == Role::kRef) return "ref";
  return "actor";
}

}  // namespace

namespace {

ReadRun read_run_of(const std::vector<ConfigEntry>& entries) {
  const LaunchSettings s(entries);
  ReadRun run;
  auto note = [&](const std::string& k, const std::string& text) { run.notes.push_back(k + ": " + text); };
  const Layout layout = read_layout(s);
  const Allocation gen = layout.gen, train = layout.train;
  const std::string layout_key = layout.key;
  run.options = {{"backend", train.backend}, {"colocated", layout.colocated}};
  if (layout.colocated && s.integer("rollout.max_head_offpolicyness", 0) > 0)
    throw Error("rollout.max_head_offpolicyness",
                "colocated engines take turns on the GPUs, on-policy (0) as AReaL's colocated example runs "
                "them; realign prices them so");
  if (s.flag("actor.use_lora", false))
    throw Error("actor.use_lora", "LoRA training is not priced by realign");
  if (!s.flag("actor.recompute_logprob", false) && !s.flag("actor.use_decoupled_loss", false))
    throw Error("actor.recompute_logprob",
                "false (and actor.use_decoupled_loss false): the actor then trains on the inference "
                "engine's log-probs; realign prices AReaL with them recomputed (set it true)");

  // The workload: PPO where a critic is configured, else GRPO; rewards from functions.
  const bool ppo = !s.text("critic.path", "").empty();
  const int64_t prompts = s.integer("train_dataset.batch_size", 0);
  const int64_t n = s.integer("gconfig.n_samples", 1);
  const int64_t mini = s.integer("actor.ppo_n_minibatches", 4);
  for (const char* k : {"train_dataset.batch_size", "train_dataset.max_length", "gconfig.max_new_tokens"})
    if (s.integer(k, 0) < 1) throw Error(k, "not set; realign needs it for the batch's shape");
  if (mini < 1 || (prompts * n) % mini != 0)
    throw Error("actor.ppo_n_minibatches", std::to_string(mini) + " mini-batches do not divide the " +
                                               std::to_string(prompts * n) +
                                               " sequences of train_dataset.batch_size x gconfig.n_samples");
  if (s.integer("rollout.consumer_batch_size", prompts) != prompts)
    note("rollout.consumer_batch_size", "priced as train_dataset.batch_size prompts a step");
  if (ppo && s.integer("critic.ppo_n_minibatches", 4) != mini)
    note("critic.ppo_n_minibatches", "priced with the actor's mini-batches (realign has one per iteration)");
  Json& c = run.config;
  c["algorithm"] = ppo ? "ppo" : "grpo";
  if (s.text("actor.path", "").empty()) throw Error("actor.path", "not set: the actor's model");
  read_model(run, "actor", "actor.path", s.text("actor.path", ""));
  if (ppo) read_model(run, "critic", "critic.path", s.text("critic.path", ""));
  c["batch"] = {{"prompts", prompts},
                {"samples_per_prompt", n},
                {"prompt_len", s.integer("train_dataset.max_length", 0)},
                {"gen_len", s.integer("gconfig.max_new_tokens", 0)},
                {"gen_len_max", s.integer("gconfig.max_new_tokens", 0)},
                {"mini_batches", mini},
                {"epochs", 1}};
  c["reward"]["kind"] = "verifier";
  const int64_t staleness = s.integer("rollout.max_head_offpolicyness", 0);
  // AReaL's rollout streams: interruptible generation keeps the servers' batch full across weight updates.
  if (staleness > 0) c["train"]["staleness"] = staleness, c["train"]["partial_rollout"] = true;
  c["plan"] = {{"mode", "search"}, {"seed", 1}, {"time_budget_s", 5}};
  run.sources = {{"models.actor", "actor.path"},
                 {"models.critic", "critic.path"},
                 {"batch.prompts", "train_dataset.batch_size"},
                 {"batch.samples_per_prompt", "gconfig.n_samples"},
                 {"batch.prompt_len", "train_dataset.max_length"},
                 {"batch.gen_len", "gconfig.max_new_tokens"},
                 {"batch.gen_len_max", "gconfig.max_new_tokens"},
                 {"train.partial_rollout", "rollout.max_head_offpolicyness"},
                 {"batch.mini_batches", "actor.ppo_n_minibatches"},
                 {"train.staleness", "rollout.max_head_offpolicyness"},
                 {"cluster.nodes", "cluster.n_nodes"},
                 {"cluster.devices_per_node", "cluster.n_gpus_per_node"}};
  // AReaL computes the reference's log-probs only for a KL term (rl_trainer.py: `config.actor.kl_ctl > 0 and
  // config.ref is not None`), which it subtracts from the reward (ppo/actor.py); kl_ctl's default is 0.1.
  const double kl_ctl = s.number("actor.kl_ctl", 0.1);
  const bool ref_section = std::any_of(entries.begin(), entries.end(), [](const ConfigEntry& e) {
    return e.key == "ref" || e.key.rfind("ref.", 0) == 0;
  });
  if (kl_ctl <= 0 || !ref_section) {
    c["models"]["ref"] = kNoReference;
    run.sources["models.ref"] = kl_ctl <= 0 ? "actor.kl_ctl" : "ref";
    note(kl_ctl <= 0 ? "actor.kl_ctl" : "ref",
         std::string(kl_ctl <= 0 ? "0" : "no ref section") +
             ": no KL term, so AReaL runs no reference model: priced without one (models.ref: none)");
  } else {
    c["train"]["ppo"]["kl_mode"] = "reward";
    c["train"]["ppo"]["kl_coef"] = kl_ctl;
    run.sources["train.ppo.kl_coef"] = "actor.kl_ctl";
  }
  if (gen.backend == "vllm" && s.flag("vllm.enforce_eager", true))
    note("vllm.enforce_eager", std::string("AReaL's vLLM default; ") + kEagerDecodingNote);
  if (gen.backend == "sglang" && s.flag("sglang.disable_cuda_graph", false))
    note("sglang.disable_cuda_graph", kEagerDecodingNote);
  if (s.flag("enable_offload", false) && !layout.colocated)
    note("enable_offload", "priced without offloading");

  // The cluster: the nodes the config gives, or just the GPUs the two allocations take.
  const int gen_gpus = gen.grid.dp * gen.grid.tp, train_gpus = train.grid.dp * train.grid.tp * train.grid.pp;
  int nodes = int(s.integer("cluster.n_nodes", 1)), per_node = int(s.integer("cluster.n_gpus_per_node", 8));
  const int used = layout.colocated ? gen_gpus : gen_gpus + train_gpus;
  if (used > nodes * per_node)
    throw Error(layout_key, std::to_string(used) + " GPUs (generation " + std::to_string(gen_gpus) +
                                ", training " + std::to_string(train_gpus) +
                                ") exceed cluster.n_nodes x "
                                "cluster.n_gpus_per_node = " +
                                std::to_string(nodes * per_node));
  if (used < nodes * per_node) {
    if (used % per_node == 0)
      nodes = used / per_node;
    else if (nodes == 1)
      per_node = used;
    else
      throw Error(layout_key,
                  std::to_string(used) + " GPUs do not fill whole nodes of " + std::to_string(per_node));
    note(layout_key, "takes " + std::to_string(used) + " of the cluster's GPUs; priced on those");
  }
  c["cluster"] = {{"nodes", nodes}, {"devices_per_node", per_node}};

  // The layout: generation on its own GPUs first (AReaL starts the servers before the trainers), the
  // trained and inferred models together in the training allocation.
  run.plan = [s, gen, train, gen_gpus, layout_key, options = run.options](
                 const DataflowGraph& g, const Cluster& cluster, std::vector<std::string>& notes) {
    const size_t gen_call = size_t(g.mfc_index("actor_gen"));
    std::optional<Placement> chosen;
    for (const Placement& p : make_engine("areal")->placements(g, cluster))
      if (has_options(p, options) && p.meshes[gen_call].size == gen_gpus &&
          (!chosen || p.meshes[gen_call].first == 0))
        chosen = p;
    if (!chosen)
      throw Error(layout_key, "no AReaL placement gives generation " + std::to_string(gen_gpus) +
                                  " GPUs of " + std::to_string(cluster.n_devices()));
    ExecutionPlan plan;
    plan.name = "script";
    for (size_t i = 0; i < g.mfcs.size(); ++i) {
      const Mfc& m = g.mfcs[i];
      Strategy st = m.kind() == MfcKind::kGenerate ? gen.grid : train.grid;
      if (m.kind() != MfcKind::kGenerate) {
        const std::string role = role_of(m);
        st.micro_batches = micro_batches(s, role, m, st.dp, notes);
        if (m.kind() == MfcKind::kTrain) {
          st.zero1 = train.backend == "fsdp" && st.dp > 1;
          st.recompute = s.flag(role + ".gradient_checkpointing", true);
        }
      }
      plan.assignments.push_back({m.name, chosen->meshes[i], st});
    }
    return plan;
  };
  return run;
}

}  // namespace

// Errors name the line of the key where the launch's command line writes it.
ReadRun read_areal_run(const std::vector<ConfigEntry>& entries) {
  return read_as_written(entries, {}, [&] { return read_run_of(entries); });
}

}  // namespace realign::engines
