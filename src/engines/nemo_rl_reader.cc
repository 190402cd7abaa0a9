// A user's NeMo-RL GRPO launch (`uv run examples/run_grpo.py --config <config>.yaml key=value ...`) read back
// into a realign config and plan: the inverse of the NeMo-RL writer (nemo_rl.cc). The config is read where it
// is found (a recipe and the configs its defaults name); where it is not, the defaults of the base configs
// the writer launches (NVIDIA-NeMo/RL examples/configs/grpo_math_1B.yaml, and grpo_math_1B_megatron.yaml over
// it) stand for the keys the command line leaves out.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "engines/adapters.h"
#include "engines/expert_rules.h"
#include "engines/launch_config.h"
#include "engines/megatron_stages.h"
#include "engines/placements.h"
#include "engines/pricing.h"
#include "engines/script_reader.h"
#include "engines/users_words.h"
#include "plan/execution_plan.h"

namespace realign::engines {
namespace {

constexpr const char* kMegatron = "policy.megatron_cfg";
constexpr const char* kDtensor = "policy.dtensor_cfg";
constexpr const char* kVllm = "policy.generation.vllm_cfg";

// Where a generation backend's config holds what realign prices: its tensor and expert parallel sizes (ep
// empty: none) and its share of each GPU's memory.
struct ServingKeys {
  std::string tp, ep, memory;
};
ServingKeys serving_keys(const std::string& backend) {
  const std::string vllm = kVllm;
  if (backend == "sglang")
    return {"policy.generation.sglang_cfg.tp_size", "policy.generation.sglang_cfg.ep_size",
            "policy.generation.sglang_cfg.mem_fraction_static"};
  if (backend == "trtllm")
    return {"policy.generation.trtllm_cfg.tensor_parallel_size", "", vllm + ".gpu_memory_utilization"};
  return {vllm + ".tensor_parallel_size", vllm + ".expert_parallel_size", vllm + ".gpu_memory_utilization"};
}

std::string key(const std::string& prefix, const std::string& leaf) { return prefix + "." + leaf; }

// The prompt length assumed where a launch gives neither max_new_tokens below the total nor a prompt cap
// (data.max_input_seq_length) below it: a math problem under NeMo-RL's examples/prompts/cot.txt and a chat
// template is well within it; at most half the sequence.
constexpr int64_t kAssumedNemoRlPromptLen = 256;

}  // namespace

namespace {

ReadRun read_run_of(const LaunchConfig& launch) {
  const LaunchSettings s(launch.entries);
  ReadRun run;
  auto note = [&](const std::string& k, const std::string& text) { run.notes.push_back(k + ": " + text); };
  const std::string base = s.text("--config", "examples/configs/grpo_math_1B.yaml");
  const std::string file =
      base.substr(base.find_last_of('/') == std::string::npos ? 0 : base.find_last_of('/') + 1);
  const bool megatron_base = file == "grpo_math_1B_megatron.yaml";
  if (!launch.config_file.empty())
    note("--config", "read " + launch.config_file + " and the configs its defaults name");
  else if (file != "grpo_math_1B.yaml" && !megatron_base)
    note("--config", "'" + base +
                         "' is not found here and is not one of the base configs realign knows "
                         "(grpo_math_1B.yaml, grpo_math_1B_megatron.yaml); what it sets beyond the command "
                         "line is read as grpo_math_1B.yaml's defaults (run realign in the NeMo-RL checkout "
                         "to read it)");
  const bool megatron = s.flag(key(kMegatron, "enabled"), megatron_base);
  if (megatron == s.flag(key(kDtensor, "enabled"), !megatron_base))
    throw Error(key(kMegatron, "enabled"),
                "exactly one of policy.megatron_cfg and policy.dtensor_cfg is enabled");
  run.options = {{"backend", megatron ? "megatron" : "dtensor"}};
  // Generation through Megatron-Core's own inference engine on the policy's layout is another engine than
  // the serving one NeMo-RL's pricing holds (CUDA graphs, its memory share, its own layout). The other
  // serving engines NeMo-RL runs are priced as its vLLM with their own tp, ep and memory share where their
  // configs name them (sglang_cfg's tp_size, ep_size, mem_fraction_static; trtllm_cfg's
  // tensor_parallel_size), vllm_cfg's otherwise, and said so.
  const std::string backend = s.text("policy.generation.backend", "vllm");
  if (backend == "megatron")
    throw Error("policy.generation.backend",
                "'megatron' generation (Megatron-Core's inference engine on the policy's layout) is not priced: "
                "realign prices NeMo-RL's serving-engine generation (policy.generation.backend=vllm)");
  if (backend != "vllm" && backend != "sglang" && backend != "trtllm" && backend != "dynamo")
    throw Error("policy.generation.backend",
                "'" + backend + "' is none of the generation backends realign prices for NeMo-RL (vllm; "
                "sglang, trtllm and dynamo priced as vllm)");
  const ServingKeys serving = serving_keys(backend);
  if (backend != "vllm")
    note("policy.generation.backend",
         "'" + backend + "' priced as vLLM (a serving engine decoding through CUDA graphs), its tensor parallel "
         "size from " + serving.tp + ", its memory share from " + serving.memory + "; its other settings are "
         "not read");
  // The engine holds its weights, activations and KV cache in this share of each GPU (vLLM's in both base
  // configs: 0.6).
  const double vllm_share = s.number(serving.memory, 0.6);
  if (!(vllm_share > 0 && vllm_share <= 1))
    throw Error(serving.memory,
                "must be a share of the GPU's memory in (0, 1], got " + std::to_string(vllm_share));
  run.pricing_options["generation_memory_fraction"] = vllm_share;
  // Megatron's first and last stages cut to the script's counts (megatron_stages.h): pp need not divide the
  // layers then.
  for (const char* leaf : {"num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage"})
    if (megatron && s.integer(key(kMegatron, leaf), -1) != -1) run.pricing_options[kPipelineStageEnds] = true;
  if (s.integer(key(kVllm, "pipeline_parallel_size"), 1) > 1)
    throw Error(key(kVllm, "pipeline_parallel_size"), "vLLM pipeline parallelism is not priced by realign");
  // LoRA: DTensor's lora_cfg, Megatron's peft (its recipes' -lora configs).
  for (const char* lora : {"policy.dtensor_cfg.lora_cfg.enabled", "policy.megatron_cfg.peft.enabled"})
    if (s.flag(lora, false)) throw Error(lora, "LoRA training is not priced by realign");

  // The workload: GRPO with a verifier (NeMo-RL's math environment).
  const int64_t prompts = s.integer("grpo.num_prompts_per_step", 32);
  const int64_t n = s.integer("grpo.num_generations_per_prompt", 16);
  const int64_t total = s.integer("policy.max_total_sequence_length", 512);
  int64_t gen_len = s.integer("policy.generation.max_new_tokens", total);
  int64_t prompt_len = total - gen_len;
  if (gen_len >= total) {
    // NeMo-RL's recipes leave max_new_tokens at the total (its default) and run vLLM with max_model_len the
    // total too: a response stops at the total less its own prompt. The prompts' cap is the data's
    // max_input_seq_length where the config gives one below the total (grpo_math_1B.yaml makes it the total:
    // "real truncation occurs at vllm.max_model_len"); else an assumed length, said so.
    const std::string model_len_key = key(kVllm, "max_model_len");
    const int64_t model_len = std::min(total, s.integer(model_len_key, total));
    const int64_t input_cap = s.integer("data.max_input_seq_length", total);
    const std::string cap_text = s.text("data.max_input_seq_length", "not set");
    const std::string model_len_words =
        s.has(model_len_key) ? model_len_key : "policy.max_total_sequence_length, vLLM's max_model_len";
    const std::string why = std::to_string(gen_len) + ", the whole sequence (" + model_len_words + " " +
                            std::to_string(model_len) + "), so a response stops at " +
                            std::to_string(model_len) + " less its prompt";
    if (input_cap >= 1 && input_cap < model_len) {
      prompt_len = input_cap;
      note("policy.generation.max_new_tokens",
           why + "; priced with prompts of data.max_input_seq_length (" + std::to_string(prompt_len) +
               ") and responses up to " + std::to_string(model_len - prompt_len));
    } else {
      prompt_len = std::min(kAssumedNemoRlPromptLen, model_len / 2);
      note("policy.generation.max_new_tokens",
           why + ", and the prompts' length is not in the config (data.max_input_seq_length is " +
               (cap_text == "not set" ? cap_text : cap_text + ", not below it") +
               "): assumed " + std::to_string(prompt_len) + " tokens a prompt, responses up to " +
               std::to_string(model_len - prompt_len) + "; pass batch.prompt_len=P batch.gen_len_max=" +
               std::to_string(model_len) + "-P for the task's prompts");
    }
    gen_len = std::min(gen_len, model_len - prompt_len);
  }
  if (gen_len < 1)
    throw Error("policy.generation.max_new_tokens", std::to_string(gen_len) + ": must be at least 1");
  const int64_t per_step = s.integer("policy.train_global_batch_size", 512);
  if (per_step < 1 || (prompts * n) % per_step != 0)
    throw Error("policy.train_global_batch_size",
                std::to_string(per_step) + " samples per optimizer step do not divide the " +
                    std::to_string(prompts * n) +
                    " of grpo.num_prompts_per_step x num_generations_per_prompt");
  Json& c = run.config;
  c["algorithm"] = "grpo";
  read_model(run, "actor", "policy.model_name", s.text("policy.model_name", "Qwen/Qwen2.5-1.5B"));
  // NeMo-RL builds the policy from the HF config with policy.hf_config_overrides over it; its long-context
  // recipes raise the positions so (max_position_embeddings itself, or YaRN's factor times
  // original_max_position_embeddings, the length the scaled RoPE serves), which the lengths realign checks
  // need. The RoPE variant itself costs nothing realign prices.
  const std::string overrides = "policy.hf_config_overrides.";
  const std::string yarn_factor = overrides + "rope_scaling.factor",
                    yarn_original = overrides + "rope_scaling.original_max_position_embeddings";
  std::string positions_key;
  int64_t positions = 0;
  if (s.has(overrides + "max_position_embeddings")) {
    positions_key = overrides + "max_position_embeddings";
    positions = s.integer(positions_key, 0);
  } else if (s.has(yarn_factor) && s.has(yarn_original)) {
    positions_key = yarn_factor;
    positions = std::llround(s.number(yarn_factor, 1.0) * double(s.integer(yarn_original, 0)));
  }
  if (!positions_key.empty() && positions < 1)
    throw Error(positions_key, "gives " + std::to_string(positions) + " positions; must give at least 1");
  if (positions > 0)
    c["models"]["actor"] = {{"model", c["models"]["actor"]},
                            {"override_config", {{"max_position_embeddings", positions}}}};
  c["batch"] = {{"prompts", prompts},
                {"samples_per_prompt", n},
                {"prompt_len", prompt_len},
                {"gen_len", gen_len},
                {"gen_len_max", gen_len},
                {"mini_batches", prompts * n / per_step},
                {"epochs", 1}};
  c["reward"]["kind"] = "verifier";
  c["cluster"] = {{"nodes", s.integer("cluster.num_nodes", 1)},
                  {"devices_per_node", s.integer("cluster.gpus_per_node", 1)}};
  c["plan"] = {{"mode", "search"}, {"seed", 1}, {"time_budget_s", 5}};
  if (s.flag("grpo.async_grpo.enabled", false)) {
    c["train"]["staleness"] = s.integer("grpo.async_grpo.max_trajectory_age_steps", 1);
    // Async GRPO streams: new prompts' samples take finished ones' places, long ones finish with the
    // weights they started under (in-flight weight updates), so no step waits for the batch's tail.
    c["train"]["partial_rollout"] = true;
  }
  run.sources = {{"models.actor", "policy.model_name"},
                 {"batch.prompts", "grpo.num_prompts_per_step"},
                 {"batch.samples_per_prompt", "grpo.num_generations_per_prompt"},
                 {"batch.gen_len", "policy.generation.max_new_tokens"},
                 {"batch.gen_len_max", "policy.generation.max_new_tokens"},
                 {"train.partial_rollout", "grpo.async_grpo.enabled"},
                 {"batch.mini_batches", "policy.train_global_batch_size"},
                 {"cluster.nodes", "cluster.num_nodes"},
                 {"cluster.devices_per_node", "cluster.gpus_per_node"},
                 {"train.staleness", "grpo.async_grpo.max_trajectory_age_steps"}};
  if (positions > 0) run.sources["models.actor.override_config"] = positions_key;
  if (s.flag(key(kVllm, "enforce_eager"), false)) note(key(kVllm, "enforce_eager"), kEagerDecodingNote);
  // NeMo-RL loads a reference model only for a KL penalty (grpo.py setup: init_reference_model =
  // reference_policy_kl_penalty > 0), which it adds to the loss; grpo_math_1B.yaml's default is 0.01.
  const double kl_penalty = s.number("loss_fn.reference_policy_kl_penalty", 0.01);
  if (kl_penalty == 0) {
    c["models"]["ref"] = kNoReference;
    run.sources["models.ref"] = "loss_fn.reference_policy_kl_penalty";
    note("loss_fn.reference_policy_kl_penalty",
         "0: NeMo-RL then loads no reference model: priced without one (models.ref: none)");
  } else {
    c["train"]["ppo"]["kl_mode"] = "loss";
    c["train"]["ppo"]["kl_coef"] = kl_penalty;
    run.sources["train.ppo.kl_coef"] = "loss_fn.reference_policy_kl_penalty";
  }

  // The layout: generation colocated or on resources of its own; the policy's calls in one layout.
  run.plan = [s, megatron, serving, options = run.options](const DataflowGraph& g, const Cluster& cluster,
                                                  std::vector<std::string>& notes) {
    const bool colocated = s.flag("policy.generation.colocated.enabled", true);
    const int gen_gpus =
        colocated ? cluster.n_devices()
        : cluster.n_nodes == 1
            ? int(s.integer("policy.generation.colocated.resources.gpus_per_node", 0))
            : int(s.integer("policy.generation.colocated.resources.num_nodes", 0)) * cluster.devices_per_node;
    const size_t gen = size_t(g.mfc_index("actor_gen")), train = size_t(g.mfc_index("actor_train"));
    std::optional<Placement> chosen;
    for (const Placement& p : make_engine("nemo-rl")->placements(g, cluster))
      if (has_options(p, options) && p.meshes[gen].size == gen_gpus &&
          (colocated ==
           (p.meshes[gen].first == p.meshes[train].first && p.meshes[gen].size == p.meshes[train].size))) {
        chosen = p;
        break;
      }
    if (!chosen) {
      // What realign prices instead: generation colocated or apart, at the sizes its placements give.
      std::string valid;
      for (const Placement& p : make_engine("nemo-rl")->placements(g, cluster))
        if (has_options(p, options)) {
          const bool shared =
              p.meshes[gen].first == p.meshes[train].first && p.meshes[gen].size == p.meshes[train].size;
          const std::string each =
              shared ? "colocated" : "apart on " + std::to_string(p.meshes[gen].size) + " GPUs";
          if (valid.find(each) == std::string::npos) valid += (valid.empty() ? "" : ", ") + each;
        }
      const bool is_async = s.flag("grpo.async_grpo.enabled", false);
      throw Error(colocated ? "policy.generation.colocated.enabled" : "policy.generation.colocated.resources.gpus_per_node",
                  "generation " + std::string(colocated ? "colocated on all " : "apart on ") +
                      std::to_string(gen_gpus) + " of the " + std::to_string(cluster.n_devices()) +
                      " GPUs" + (is_async && colocated ? " with grpo.async_grpo.enabled" : "") +
                      " is no placement realign prices for NeMo-RL; it prices generation " +
                      (valid.empty() ? std::string("in none on this cluster") : valid));
    }
    const std::string logprob_key = "policy.logprob_batch_size";
    const std::string tp_key =
        megatron ? key(kMegatron, "tensor_model_parallel_size") : key(kDtensor, "tensor_parallel_size");
    const int64_t logprob_default = megatron ? 8 : 4;
    ExecutionPlan plan;
    plan.name = "script";
    for (size_t i = 0; i < g.mfcs.size(); ++i) {
      const Mfc& m = g.mfcs[i];
      const DeviceMesh mesh = chosen->meshes[i];
      Strategy st;
      if (m.kind() == MfcKind::kGenerate) {
        st.tp = int(s.integer(serving.tp, 1));
        st.ep = serving.ep.empty() ? 1 : int(s.integer(serving.ep, 1));
        if (st.tp < 1 || mesh.size % st.tp != 0)
          throw Error(serving.tp, std::to_string(st.tp) + " does not divide generation's " +
                                      std::to_string(mesh.size) + " GPUs");
        // A replica above a node runs on one unified Ray placement group over its nodes
        // (nemo_rl/models/generation/vllm/vllm_generation.py at 7ea279a:187-196,
        // needs_cross_node_parallelism) with vLLM's Ray executor (worker_utils.py:16-22); its all-reduces
        // cross the NIC (cost/call_cost.cc).
        if (st.tp > cluster.devices_per_node && st.tp % cluster.devices_per_node != 0)
          throw Error(serving.tp,
                      std::to_string(st.tp) + " spans nodes of " + std::to_string(cluster.devices_per_node) +
                          " GPUs (cluster.gpus_per_node) but not whole ones: realign prices a vLLM replica "
                          "within one node or over whole nodes (a multiple of " +
                          std::to_string(cluster.devices_per_node) + ")");
        st.dp = mesh.size / st.tp;
      } else {
        st.tp = int(s.integer(tp_key, 1));
        st.pp = megatron ? int(s.integer(key(kMegatron, "pipeline_model_parallel_size"), 1)) : 1;
        st.ep = megatron ? int(s.integer(key(kMegatron, "expert_model_parallel_size"), 1)) : 1;
        // Context parallelism in the policy's layout (training and log-probs): Megatron's K/V ring, or
        // DTensor's (torch's context_parallel, ring attention too).
        const std::string cp_key = megatron ? key(kMegatron, "context_parallel_size")
                                            : key(kDtensor, "context_parallel_size");
        st.cp = int(s.integer(cp_key, 1));
        if (st.cp < 1 || mesh.size % st.cp != 0)
          throw Error(cp_key, std::to_string(st.cp) + " does not divide the policy's " +
                                  std::to_string(mesh.size) + " GPUs");
        if (st.tp < 1 || st.pp < 1 || mesh.size % (st.tp * st.pp * st.cp) != 0)
          throw Error(tp_key, "tp x pp" + std::string(st.cp > 1 ? " x cp" : "") +
                                  " does not divide the policy's " + std::to_string(mesh.size) + " GPUs");
        if (megatron) {
          const auto end = [&](const char* leaf) -> std::optional<int> {
            const int64_t layers = s.integer(key(kMegatron, leaf), -1);  // -1: unset or null
            return layers == -1 ? std::nullopt : std::optional<int>(int(layers));
          };
          // (NeMo-RL's setup.py passes the ends to Megatron, not the account_for_*_in_pipeline_split flags.)
          const std::string stages = megatron_stage_note(
              int(g.model(m.model).spec.n_layers), st.pp,
              {end("num_layers_in_first_pipeline_stage"), end("num_layers_in_last_pipeline_stage")},
              {key(kMegatron, "pipeline_model_parallel_size"),
               key(kMegatron, "num_layers_in_first_pipeline_stage"),
               key(kMegatron, "num_layers_in_last_pipeline_stage")},
              [&](int pp) { return mesh.size % (st.tp * st.cp * pp) == 0; });
          const std::string n = key(kMegatron, "pipeline_model_parallel_size") + ": " + stages;
          if (!stages.empty() && std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
        }
        st.dp = mesh.size / (st.tp * st.pp * st.cp);
        // cp against the call's sequences, named by the key.
        if (const std::string why = strategy_problem(m, g.model(m.model).spec, cluster, mesh.size, st);
            why.rfind("cp", 0) == 0)
          throw Error(cp_key, why);
        const bool training = m.kind() == MfcKind::kTrain;
        const std::string k = training ? "policy.train_micro_batch_size" : logprob_key;
        st.micro_batches =
            micro_batches_of(k, m.seqs_per_pass(), st.dp, s.integer(k, training ? 4 : logprob_default));
        if (training) {
          st.zero1 =
              megatron ? s.flag(key(kMegatron, "optimizer.use_distributed_optimizer"), true) : st.dp > 1;
          st.recompute = s.flag(key(megatron ? kMegatron : kDtensor, "activation_checkpointing"), false);
        }
      }
      plan.assignments.push_back({m.name, mesh, st});
    }
    // NeMo-RL keeps the reference in host memory (its pricing's host_resident).
    return as_engine_runs(plan, g, make_engine("nemo-rl")->pricing(g));
  };
  return run;
}

}  // namespace

// Errors name the line of the key where the launch's command line writes it.
ReadRun read_nemo_rl_run(const LaunchConfig& launch) {
  return read_as_written(launch.entries, {}, [&] { return read_run_of(launch); });
}

}  // namespace realign::engines
