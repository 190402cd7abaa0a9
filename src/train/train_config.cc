#include "train/train_config.h"

#include <limits>

namespace realign::train {
namespace {

template <class F>
void with_section(ObjectReader& parent, const std::string& key, F&& read) {
  if (const Json* section = parent.find(key)) {
    if (!section->is_object())
      throw Error(parent.path_of(key), "expected an object, found " + json_type_name(*section));
    ObjectReader r(*section, parent.path_of(key));
    read(r);
    r.finish();
  }
}

std::string one_of(ObjectReader& r, const std::string& key, const std::string& fallback,
                   std::initializer_list<const char*> valid) {
  std::string v = r.get_string(key, fallback);
  std::string list;
  for (const char* option : valid) {
    if (v == option) return v;
    list += std::string(list.empty() ? "" : ", ") + option;
  }
  throw Error(r.path_of(key), "'" + v + "' is not one of " + list);
}

// Staleness beyond this is refused: the simulator places N iterations' calls ahead, and no recipe lets samples
// age past a few updates.
constexpr int64_t kMaxStaleness = 64;
// Threads per rank: an int, and past any machine.
constexpr int64_t kMaxThreads = 65536;
// A reward command's timeout past this (11.6 days) is not a timeout; the clock's arithmetic stays finite.
constexpr double kMaxTimeoutS = 1e6;

// A seed is a uint64; a negative one is refused (it was taken as 2^64 - 1).
uint64_t seed(ObjectReader& r, uint64_t fallback) {
  return uint64_t(r.get_int_in("seed", 0, std::numeric_limits<int64_t>::max(), int64_t(fallback)));
}

double non_negative(ObjectReader& r, const std::string& key, double fallback) {
  double v = r.get_double(key, fallback);
  if (!(v >= 0)) throw Error(r.path_of(key), "must be >= 0");
  return v;
}

void read_optim(ObjectReader& r, runtime::OptimConfig& o) {
  o.lr = r.get_double("lr", o.lr);
  if (!(o.lr > 0)) throw Error(r.path_of("lr"), "must be > 0");
  o.warmup_steps = r.get_int("warmup_steps", o.warmup_steps);
  if (o.warmup_steps < 0) throw Error(r.path_of("warmup_steps"), "must be >= 0");
  o.schedule = one_of(r, "schedule", o.schedule, {"cosine", "constant"});
  o.min_lr_ratio = non_negative(r, "min_lr_ratio", o.min_lr_ratio);
  o.weight_decay = non_negative(r, "weight_decay", o.weight_decay);
  o.beta1 = r.get_double("beta1", o.beta1);
  o.beta2 = r.get_double("beta2", o.beta2);
  if (!(o.beta1 >= 0 && o.beta1 < 1)) throw Error(r.path_of("beta1"), "must be in [0, 1)");
  if (!(o.beta2 >= 0 && o.beta2 < 1)) throw Error(r.path_of("beta2"), "must be in [0, 1)");
  o.eps = non_negative(r, "eps", o.eps);
  o.grad_clip = r.get_double("grad_clip", o.grad_clip);
  o.zero1 = r.get_bool("zero1", o.zero1);
}

void read_stage(ObjectReader& r, StageConfig& s) {
  s.steps = r.get_int("steps", s.steps);
  if (s.steps < 0) throw Error(r.path_of("steps"), "must be >= 0");
  s.batch = r.get_positive("batch", s.batch);
  with_section(r, "optim", [&](ObjectReader& o) { read_optim(o, s.optim); });
}

void read_ppo(ObjectReader& r, PpoConfig& p) {
  p.gamma = r.get_double_in("gamma", 0, 1, p.gamma);
  p.lambda = r.get_double_in("lambda", 0, 1, p.lambda);
  p.clip_eps = r.get_double("clip_eps", p.clip_eps);
  if (!(p.clip_eps > 0)) throw Error(r.path_of("clip_eps"), "must be > 0");
  p.value_clip = r.get_double("value_clip", p.value_clip);
  p.kl_coef = non_negative(r, "kl_coef", p.kl_coef);
  p.kl_estimator = one_of(r, "kl_estimator", p.kl_estimator, {"k1", "k2", "k3"});
  p.kl_mode = one_of(r, "kl_mode", p.kl_mode, {"reward", "loss"});
  p.adaptive_kl = r.get_bool("adaptive_kl", p.adaptive_kl);
  p.kl_target = r.get_double("kl_target", p.kl_target);
  if (!(p.kl_target > 0)) throw Error(r.path_of("kl_target"), "must be > 0");
  p.kl_horizon = r.get_double("kl_horizon", p.kl_horizon);
  if (!(p.kl_horizon > 0)) throw Error(r.path_of("kl_horizon"), "must be > 0");
  p.reward_clip = r.get_double("reward_clip", p.reward_clip);
  p.missing_stop_penalty = non_negative(r, "missing_stop_penalty", p.missing_stop_penalty);
  p.reward_norm = r.get_bool("reward_norm", p.reward_norm);
  p.whiten_advantages = r.get_bool("whiten_advantages", p.whiten_advantages);
  p.early_stop_kl = r.get_double("early_stop_kl", p.early_stop_kl);
  p.entropy_coef = r.get_double("entropy_coef", p.entropy_coef);
  p.value_loss_coef = non_negative(r, "value_loss_coef", p.value_loss_coef);
  p.grpo_scale_std = r.get_bool("grpo_scale_std", p.grpo_scale_std);
  p.behaviour_logprobs = one_of(r, "behaviour_logprobs", p.behaviour_logprobs, {"recompute", "generation"});
  p.behaviour_weight_cap = r.get_double("behaviour_weight_cap", p.behaviour_weight_cap);
}

}  // namespace

TrainingSections training_sections_from_json(ObjectReader& root, bool reference) {
  TrainingSections s;
  TrainConfig& t = s.train;
  if (!reference) t.ppo.kl_coef = 0;  // no reference model, no KL term
  with_section(root, "train", [&](ObjectReader& r) {
    t.steps = r.get_int("steps", t.steps);
    if (t.steps < 0) throw Error(r.path_of("steps"), "must be >= 0");
    t.staleness = r.get_int("staleness", t.staleness);
    if (t.staleness < 0 || t.staleness > kMaxStaleness)
      throw Error(r.path_of("staleness"),
                  "must be in [0, " + std::to_string(kMaxStaleness) +
                      "] (0: synchronous; N: generate with the weights N updates old)");
    t.partial_rollout = r.get_bool("partial_rollout", t.partial_rollout);
    t.staleness_share = r.get_double("staleness_share", t.staleness_share);
    if (!(t.staleness_share > 0 && t.staleness_share <= 1))
      throw Error(r.path_of("staleness_share"),
                  "must be in (0, 1]: the share of a batch generated with the weights train.staleness allows");
    t.seed = seed(r, t.seed);
    t.threads = r.get_int_in("threads", 0, kMaxThreads, t.threads);
    t.checkpoint_every = r.get_int("checkpoint_every", t.checkpoint_every);
    if (t.checkpoint_every < 0) throw Error(r.path_of("checkpoint_every"), "must be >= 0");
    t.eval_prompts = r.get_int("eval_prompts", t.eval_prompts);
    if (t.eval_prompts < 0) throw Error(r.path_of("eval_prompts"), "must be >= 0");
    t.eval_every = r.get_int("eval_every", t.eval_every);
    if (t.eval_every < 0) throw Error(r.path_of("eval_every"), "must be >= 0");
    t.dtype = one_of(r, "dtype", t.dtype, {"fp32", "bf16"});
    t.device = one_of(r, "device", t.device, {"auto", "cpu", "cuda"});
    with_section(r, "optim", [&](ObjectReader& o) { read_optim(o, t.optim); });
    t.critic_optim = t.optim;
    with_section(r, "critic_optim", [&](ObjectReader& o) { read_optim(o, t.critic_optim); });
    with_section(r, "ppo", [&](ObjectReader& o) { read_ppo(o, t.ppo); });
    with_section(r, "sampling", [&](ObjectReader& o) {
      t.sampling.temperature = o.get_double("temperature", t.sampling.temperature);
      if (!(t.sampling.temperature > 0)) throw Error(o.path_of("temperature"), "must be > 0");
      t.sampling.top_p = o.get_double("top_p", t.sampling.top_p);
      if (!(t.sampling.top_p > 0 && t.sampling.top_p <= 1))
        throw Error(o.path_of("top_p"), "must be in (0, 1]");
      t.sampling.top_k = o.get_int("top_k", t.sampling.top_k);
      if (t.sampling.top_k < 0) throw Error(o.path_of("top_k"), "must be >= 0");
    });
    with_section(r, "dpo", [&](ObjectReader& o) {
      t.dpo_beta = o.get_double("beta", t.dpo_beta);
      if (!(t.dpo_beta > 0)) throw Error(o.path_of("beta"), "must be > 0");
      t.dpo_label_smoothing = o.get_double("label_smoothing", t.dpo_label_smoothing);
    });
    t.sft_stage.optim = t.optim;
    with_section(r, "sft_stage", [&](ObjectReader& o) { read_stage(o, t.sft_stage); });
    t.reward_model_stage.optim = t.optim;
    with_section(r, "reward_model_stage", [&](ObjectReader& o) { read_stage(o, t.reward_model_stage); });
  });
  if (!reference && (t.ppo.kl_coef > 0 || t.ppo.adaptive_kl))
    throw Error(
        t.ppo.adaptive_kl ? "train.ppo.adaptive_kl" : "train.ppo.kl_coef",
        "models.ref is none: without a reference model there is no KL term, so the KL coefficient is 0 "
        "(remove the key, or name a reference model)");
  if (t.ppo.behaviour_logprobs == "generation" && t.sampling.temperature != 1.0)
    throw Error("train.ppo.behaviour_logprobs",
                "generation needs train.sampling.temperature = 1 (it is " +
                    std::to_string(t.sampling.temperature) +
                    "): the sampling's log-probs are the policy's only at temperature 1; use recompute");
  if (t.staleness > 0 && t.sampling.temperature != 1.0)
    throw Error("train.staleness",
                "asynchronous training weighs each token by the sampling's own log-probs, which are the "
                "policy's only at temperature 1: set train.sampling.temperature to 1 (it is " +
                    std::to_string(t.sampling.temperature) + ") or train.staleness to 0");
  if (!root.has("train")) {
    t.critic_optim = t.optim;
    t.sft_stage.optim = t.optim;
    t.reward_model_stage.optim = t.optim;
  }
  with_section(root, "data", [&](ObjectReader& r) {
    DataConfig& d = s.data;
    d.task = one_of(r, "task", d.task, {"addition", "files"});
    d.min_digits = int(r.get_int_in("min_digits", 1, 9, d.min_digits));
    d.max_digits = int(r.get_int_in("max_digits", d.min_digits, 9, d.max_digits));
    d.task_seed = seed(r, d.task_seed);
    d.prompts_file = r.get_string("prompts", "");
    d.sft_file = r.get_string("sft", "");
    d.preferences_file = r.get_string("preferences", "");
    d.chat_template = r.get_string("chat_template", "");
  });
  with_section(root, "reward", [&](ObjectReader& r) {
    RewardConfig& w = s.reward;
    w.kind = one_of(r, "kind", w.kind, {"verifier", "model", "command"});
    w.partial_credit = r.get_bool("partial_credit", w.partial_credit);
    w.command = r.get_string("command", "");
    w.timeout_s = r.get_double("timeout_s", w.timeout_s);
    if (!(w.timeout_s > 0 && w.timeout_s <= kMaxTimeoutS))
      throw Error(r.path_of("timeout_s"), "must be in (0, 1e6] seconds, got " + Json(w.timeout_s).dump());
    if (w.kind == "command" && w.command.empty())
      throw Error(r.path_of("command"), "required when kind is command");
  });
  return s;
}

AlgorithmConfig with_training_sections(AlgorithmConfig a, const TrainingSections& s) {
  a.reward_model = s.reward.kind == "model";
  a.recompute_logprobs = s.train.ppo.behaviour_logprobs == "recompute";
  a.staleness = s.train.staleness;
  a.partial_rollout = s.train.partial_rollout;
  a.staleness_share = s.train.staleness_share;
  if (a.staleness_share < 1 && !a.partial_rollout)
    throw Error("train.staleness_share", "a share below 1 interrupts the rest of a batch for newer weights: "
                                         "needs train.partial_rollout: true");
  if (a.partial_rollout && a.staleness == 0)
    throw Error("train.partial_rollout", "a partial rollout resumes with newer weights: needs train.staleness "
                                         ">= 1 (the samples' age bound)");
  if (a.staleness > 0 && !is_rl(a.algorithm))
    throw Error("train.staleness", "asynchronous training needs generation: " + to_string(a.algorithm) +
                                       " takes only 0 (staleness applies to ppo, grpo and remax)");
  return a;
}

}  // namespace realign::train
