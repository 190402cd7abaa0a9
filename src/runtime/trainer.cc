#include "runtime/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "algo/advantages.h"
#include "algo/gae.h"
#include "algo/kl.h"
#include "algo/masked.h"
#include "core/check.h"
#include "core/error.h"
#include "core/log.h"
#include "cost/simulation_result.h"
#include "data/epoch_sampler.h"
#include "data/jsonl.h"
#include "model/checkpoint.h"
#include "model/init.h"
#include "runtime/checkpoint_store.h"
#include "runtime/generate_call.h"
#include "runtime/inference_calls.h"
#include "runtime/metrics_log.h"
#include "runtime/progress_bar.h"
#include "runtime/run_dir.h"
#include "runtime/task_data.h"
#include "runtime/text_codec.h"
#include "runtime/train_calls.h"
#include "runtime/train_checkpoint.h"

namespace realign::runtime {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL ^
               c * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ULL;
  return x ^ (x >> 32);
}

struct Stage {
  std::string kind;  // sft | rm | rl | dpo
  int64_t steps = 0;
  int64_t first = 1;  // its first global step
};

// Rows [begin, end) of `n` that data-parallel rank `r` of `size` handles.
std::pair<int64_t, int64_t> dp_slice(int64_t n, int r, int size) {
  return {n * r / size, n * (r + 1) / size};
}

template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<int64_t>& idx, int64_t begin, int64_t end) {
  std::vector<T> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(all[size_t(idx[size_t(i)])]);
  return out;
}

class Trainer {
 public:
  Trainer(const TrainerInput& in, std::shared_ptr<comm::Group> world)
      : in_(in), t_(in.sections.train), world_(std::move(world)), codec_(TextCodec::bytes()) {}

  TrainResult run();

 private:
  CallContext context(const std::string& name) const { return data_parallel_context(name, world_); }
  bool lead() const { return world_->rank() == 0; }
  const ModelSpec& spec(const std::string& role) const;
  std::unique_ptr<model::Transformer> make_model(const std::string& role, HeadKind head, uint64_t seed);
  void build_stages();
  void build_models();
  int stage_of(int64_t step) const;
  void enter_stage(int index, bool fresh);
  std::vector<ModelSlot> slots();
  Json loop_state() const;
  void restore_loop_state(const Json& s);
  int64_t rl_optimizer_steps() const;

  Json sft_step(int64_t step);
  Json rm_step(int64_t step);
  Json rl_step(int64_t step);
  Json dpo_step(int64_t step);
  double evaluate();
  void record(const std::string& call, Clock::time_point start);

  TrainerInput in_;
  const TrainConfig& t_;
  std::shared_ptr<comm::Group> world_;
  TextCodec codec_;
  TaskData data_;
  std::vector<Stage> stages_;
  int current_stage_ = -1;
  std::string algorithm_;

  std::unique_ptr<TrainedModel> actor_, critic_, reward_;
  std::unique_ptr<model::Transformer> ref_;
  std::unique_ptr<data::EpochSampler> prompt_sampler_, sft_sampler_, pref_sampler_;
  std::unique_ptr<algo::AdaptiveKlController> kl_ctl_;

  Clock::time_point step_start_;
  std::vector<TimelineEvent> step_events_;
  Timeline last_timeline_;
};

const ModelSpec& Trainer::spec(const std::string& role) const {
  auto it = in_.algorithm.models.find(role);
  if (it == in_.algorithm.models.end()) it = in_.algorithm.models.find("actor");
  REALIGN_CHECK(it != in_.algorithm.models.end()) << "no spec for role " << role;
  return it->second;
}

std::unique_ptr<model::Transformer> Trainer::make_model(const std::string& role, HeadKind head,
                                                        uint64_t seed) {
  const ModelSpec& s = spec(role);
  if (s.vocab < codec_.vocab_size())
    throw Error("models." + role, "vocabulary of " + std::to_string(s.vocab) +
                                      " tokens is smaller than the " + std::to_string(codec_.vocab_size()) +
                                      " the tokenizer needs");
  at::ScalarType dtype = t_.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  auto m = std::make_unique<model::Transformer>(
      s, head, model::ParallelContext{comm::single_rank_group(), 0, 1}, dtype, at::Device(at::kCPU));
  auto dir = in_.model_dirs.find(role);
  if (dir != in_.model_dirs.end()) {
    model::LoadOptions lo;
    lo.value_head_seed = seed;
    m->load_shards(model::load_hf_full(dir->second, s, head, dtype, lo), true);
  } else {
    m->load_shards(model::init_full_params(s, head, seed), true);
  }
  return m;
}

void Trainer::build_stages() {
  const std::string& a = algorithm_;
  auto add = [&](const std::string& kind, int64_t steps) {
    if (steps <= 0) return;
    int64_t first = stages_.empty() ? 1 : stages_.back().first + stages_.back().steps;
    stages_.push_back({kind, steps, first});
  };
  if (a == "sft") {
    add("sft", t_.steps);
  } else if (a == "rm") {
    add("rm", t_.steps);
  } else if (a == "dpo") {
    add("sft", t_.sft_stage.steps);
    add("dpo", t_.steps);
  } else {
    add("sft", t_.sft_stage.steps);
    if (in_.sections.reward.kind == "model") {
      if (t_.reward_model_stage.steps <= 0 && !in_.model_dirs.count("reward"))
        throw Error("train.reward_model_stage.steps",
                    "reward.kind is model: train one here (steps > 0) or give models.reward a trained model "
                    "directory");
      add("rm", t_.reward_model_stage.steps);
    }
    add("rl", t_.steps);
  }
}

void Trainer::build_models() {
  const std::string& a = algorithm_;
  bool rl = a == "ppo" || a == "grpo" || a == "remax";
  auto trained = [&](const std::string& role, HeadKind head, uint64_t seed) {
    auto m = std::make_unique<TrainedModel>();
    auto model = make_model(role, head, seed);
    // The optimizer is replaced by enter_stage(); this one only gives the slot a state of the right shape.
    *m = make_trained_model(std::move(model), t_.optim, 1);
    return m;
  };
  if (a != "rm") actor_ = trained("actor", HeadKind::kLanguageModel, t_.seed);
  if (a == "rm" || (rl && in_.sections.reward.kind == "model"))
    reward_ = trained("reward", HeadKind::kValue, mix_seed(t_.seed, 2, 0));
  if (rl || a == "dpo") ref_ = make_model("ref", HeadKind::kLanguageModel, t_.seed);
  if (a == "ppo") critic_ = trained("critic", HeadKind::kValue, mix_seed(t_.seed, 1, 0));
  kl_ctl_ = std::make_unique<algo::AdaptiveKlController>(t_.ppo.kl_coef, t_.ppo.kl_target, t_.ppo.kl_horizon);
}

int Trainer::stage_of(int64_t step) const {
  for (size_t i = 0; i < stages_.size(); ++i)
    if (step < stages_[i].first + stages_[i].steps) return int(i);
  return int(stages_.size()) - 1;
}

int64_t Trainer::rl_optimizer_steps() const {
  return t_.steps * in_.algorithm.batch.epochs * std::max<int64_t>(1, in_.algorithm.batch.mini_batches);
}

void Trainer::enter_stage(int index, bool fresh) {
  current_stage_ = index;
  const Stage& s = stages_[size_t(index)];
  auto reset_optim = [](TrainedModel& m, const OptimConfig& c, int64_t steps) {
    m.config = c;
    m.optim = std::make_unique<AdamW>(m.model->named_params(), c, steps);
  };
  if (s.kind == "sft") reset_optim(*actor_, algorithm_ == "sft" ? t_.optim : t_.sft_stage.optim, s.steps);
  if (s.kind == "rm")
    reset_optim(*reward_, algorithm_ == "rm" ? t_.optim : t_.reward_model_stage.optim, s.steps);
  if (s.kind == "dpo") reset_optim(*actor_, t_.optim, s.steps);
  if (s.kind == "rl") {
    reset_optim(*actor_, t_.optim, rl_optimizer_steps());
    if (critic_) reset_optim(*critic_, t_.critic_optim, rl_optimizer_steps());
  }
  if (!fresh) return;
  // A policy stage starts from the actor as it is now: the reference is its frozen copy, and the critic's
  // trunk starts from it too (when the shapes agree), with its own value head.
  if ((s.kind == "rl" || s.kind == "dpo") && ref_ && spec("ref") == spec("actor") &&
      !in_.model_dirs.count("ref"))
    ref_->load_shards(actor_->model->named_params(), false);
  if (s.kind == "rl" && critic_ && spec("critic") == spec("actor") && !in_.model_dirs.count("critic"))
    critic_->model->load_shards(actor_->model->named_params(), false);
}

std::vector<ModelSlot> Trainer::slots() {
  std::vector<ModelSlot> out;
  if (actor_) out.push_back({"actor", actor_->model.get(), actor_->optim.get()});
  if (critic_) out.push_back({"critic", critic_->model.get(), critic_->optim.get()});
  if (reward_) out.push_back({"reward", reward_->model.get(), reward_->optim.get()});
  if (ref_) out.push_back({"ref", ref_.get(), nullptr});
  return out;
}

Json Trainer::loop_state() const {
  auto sampler = [](const data::EpochSampler& s) {
    return Json{{"epoch", s.state().epoch}, {"position", s.state().position}};
  };
  return Json{{"prompts", sampler(*prompt_sampler_)},
              {"sft", sampler(*sft_sampler_)},
              {"preferences", sampler(*pref_sampler_)},
              {"kl_coef", kl_ctl_->coef()}};
}

void Trainer::restore_loop_state(const Json& s) {
  auto restore = [&](data::EpochSampler& sampler, const char* key) {
    if (!s.contains(key)) throw Error("checkpoint", std::string("loop state has no '") + key + "' sampler");
    sampler.restore({s[key]["epoch"].get<int64_t>(), s[key]["position"].get<int64_t>()});
  };
  restore(*prompt_sampler_, "prompts");
  restore(*sft_sampler_, "sft");
  restore(*pref_sampler_, "preferences");
  kl_ctl_->set_coef(s.value("kl_coef", t_.ppo.kl_coef));
}

void Trainer::record(const std::string& call, Clock::time_point start) {
  auto secs = [&](Clock::time_point t) { return std::chrono::duration<double>(t - step_start_).count(); };
  step_events_.push_back({call, "call", 0, world_->size(), secs(start), secs(Clock::now()), 0});
}

double Trainer::evaluate() {
  if (!actor_ || data_.eval_prompts.empty()) return -1;
  CallContext ctx = context("eval_gen");
  auto [b0, b1] = dp_slice(int64_t(data_.eval_prompts.size()), world_->rank(), world_->size());
  std::vector<data::PromptRecord> local(data_.eval_prompts.begin() + b0, data_.eval_prompts.begin() + b1);
  std::vector<TokenIds> prompts;
  for (const auto& p : local) prompts.push_back(codec_.encode(p.prompt));
  SamplingOptions o;
  o.greedy = true;
  o.max_new_tokens = in_.algorithm.batch.gen_len;
  o.stop_tokens = codec_.stop_tokens();
  o.pad_id = codec_.pad_id();
  std::vector<TokenIds> responses = generate_call(ctx, *actor_->model, prompts, o);
  RewardConfig verifier;
  double correct = 0;
  std::vector<std::string> texts;
  for (const TokenIds& r : responses) texts.push_back(codec_.decode(r));
  for (double r : rule_rewards(verifier, local, texts)) correct += r;
  at::Tensor sums = at::tensor({correct, double(local.size())}, at::kDouble);
  world_->all_reduce_sum(sums);
  return sums[0].item<double>() / std::max(1.0, sums[1].item<double>());
}

Json Trainer::sft_step(int64_t) {
  int64_t n = algorithm_ == "sft" ? in_.algorithm.batch.prompts : t_.sft_stage.batch;
  std::vector<int64_t> idx = sft_sampler_->next(n);
  auto [b0, b1] = dp_slice(n, world_->rank(), world_->size());
  std::vector<TokenIds> p, r;
  for (const auto& rec : pick(data_.sft, idx, b0, b1))
    p.push_back(codec_.encode(rec.prompt)), r.push_back(codec_.encode(rec.response));
  auto t0 = Clock::now();
  SftStats st = sft_train_call(context("actor_train"), *actor_, make_sequence_batch(p, r, codec_.pad_id()));
  record("actor_train", t0);
  return Json{{"loss/sft", st.loss}, {"grad_norm/actor", st.grad_norm}, {"lr", st.lr}};
}

Json Trainer::rm_step(int64_t) {
  int64_t n = algorithm_ == "rm" ? in_.algorithm.batch.prompts : t_.reward_model_stage.batch;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  auto [b0, b1] = dp_slice(n, world_->rank(), world_->size());
  std::vector<TokenIds> p, c, r;
  for (const auto& rec : pick(data_.preferences, idx, b0, b1)) {
    p.push_back(codec_.encode(rec.prompt));
    c.push_back(codec_.encode(rec.chosen));
    r.push_back(codec_.encode(rec.rejected));
  }
  auto t0 = Clock::now();
  PairStats st =
      reward_model_train_call(context("reward_train"), *reward_, make_sequence_batch(p, c, codec_.pad_id()),
                              make_sequence_batch(p, r, codec_.pad_id()));
  record("reward_train", t0);
  return Json{{"loss/reward_model", st.loss},
              {"rm/accuracy", st.accuracy},
              {"rm/margin", st.margin},
              {"grad_norm/reward", st.grad_norm}};
}

Json Trainer::dpo_step(int64_t) {
  int64_t n = in_.algorithm.batch.prompts;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  auto [b0, b1] = dp_slice(n, world_->rank(), world_->size());
  std::vector<TokenIds> p, c, r;
  for (const auto& rec : pick(data_.preferences, idx, b0, b1)) {
    p.push_back(codec_.encode(rec.prompt));
    c.push_back(codec_.encode(rec.chosen));
    r.push_back(codec_.encode(rec.rejected));
  }
  SequenceBatch chosen = make_sequence_batch(p, c, codec_.pad_id()),
                rejected = make_sequence_batch(p, r, codec_.pad_id());
  auto t0 = Clock::now();
  CallContext ref_ctx = context("ref_inf");
  at::Tensor rc = sum_over_response(logprobs_call(ref_ctx, *ref_, chosen), chosen);
  at::Tensor rr = sum_over_response(logprobs_call(ref_ctx, *ref_, rejected), rejected);
  record("ref_inf", t0);
  t0 = Clock::now();
  PairStats st = dpo_train_call(context("actor_train"), *actor_, chosen, rejected, rc, rr, t_.dpo_beta,
                                t_.dpo_label_smoothing);
  record("actor_train", t0);
  return Json{{"loss/dpo", st.loss},
              {"dpo/accuracy", st.accuracy},
              {"dpo/margin", st.margin},
              {"grad_norm/actor", st.grad_norm}};
}

Json Trainer::rl_step(int64_t step) {
  const BatchShape& bs = in_.algorithm.batch;
  const PpoConfig& ppo = t_.ppo;
  const int64_t group = algorithm_ == "grpo" ? std::max<int64_t>(1, bs.samples_per_prompt) : 1;
  std::vector<int64_t> idx = prompt_sampler_->next(bs.prompts);
  auto [b0, b1] = dp_slice(bs.prompts, world_->rank(), world_->size());
  std::vector<data::PromptRecord> records;
  for (const auto& rec : pick(data_.prompts, idx, b0, b1))
    for (int64_t k = 0; k < group; ++k) records.push_back(rec);
  std::vector<TokenIds> prompts;
  for (const auto& rec : records) prompts.push_back(codec_.encode(rec.prompt));

  SamplingOptions so;
  so.max_new_tokens = bs.gen_len;
  so.temperature = t_.sampling.temperature;
  so.top_p = t_.sampling.top_p;
  so.top_k = t_.sampling.top_k;
  so.stop_tokens = codec_.stop_tokens();
  so.pad_id = codec_.pad_id();
  // A seed per sample (global index), so the responses do not depend on the data-parallel split.
  for (int64_t i = 0; i < int64_t(records.size()); ++i)
    so.row_seeds.push_back(mix_seed(t_.seed, uint64_t(step), uint64_t(b0 * group + i)));
  auto t0 = Clock::now();
  std::vector<TokenIds> responses = generate_call(context("actor_gen"), *actor_->model, prompts, so);
  record("actor_gen", t0);
  SequenceBatch seqs = make_sequence_batch(prompts, responses, codec_.pad_id());
  const at::Tensor& mask = seqs.response_mask;

  auto score = [&](const std::vector<TokenIds>& resp, const SequenceBatch& batch, const std::string& call) {
    auto start = Clock::now();
    at::Tensor out;
    if (reward_) {
      out = scores_call(context(call), *reward_->model, batch);
    } else {
      std::vector<std::string> texts;
      for (const TokenIds& r : resp) texts.push_back(codec_.decode(r));
      out = at::tensor(rule_rewards(in_.sections.reward, records, texts), at::kDouble).to(at::kFloat);
    }
    record(call, start);
    return out;
  };
  at::Tensor scores = score(responses, seqs, "reward_inf");
  at::Tensor raw_scores = scores.clone();

  t0 = Clock::now();
  at::Tensor ref_lp = logprobs_call(context("ref_inf"), *ref_, seqs);
  record("ref_inf", t0);
  t0 = Clock::now();
  at::Tensor old_lp = logprobs_call(context("actor_inf"), *actor_->model, seqs);
  record("actor_inf", t0);
  at::Tensor values;
  if (critic_) {
    t0 = Clock::now();
    values = values_call(context("critic_inf"), *critic_->model, seqs);
    record("critic_inf", t0);
  }

  algo::KlEstimator est = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  at::Tensor kl = algo::kl_per_token(old_lp, ref_lp, est) * mask;
  const double kl_coef = kl_ctl_->coef();
  if (ppo.reward_clip > 0) scores = scores.clamp(-ppo.reward_clip, ppo.reward_clip);
  if (ppo.reward_norm && scores.numel() > 1) scores = (scores - scores.mean()) / (scores.std() + 1e-8);

  PpoBatch batch;
  batch.seqs = seqs;
  batch.old_logprobs = old_lp;
  batch.ref_logprobs = ref_lp;
  const bool kl_in_reward = ppo.kl_mode == "reward";
  if (algorithm_ == "ppo") {
    at::Tensor rewards = algo::token_rewards(scores, kl, mask, kl_in_reward ? kl_coef : 0.0);
    algo::GaeResult g = algo::gae(rewards, values, mask, ppo.gamma, ppo.lambda);
    batch.advantages = ppo.whiten_advantages ? algo::masked_whiten(g.advantages, mask) * mask : g.advantages;
    batch.returns = g.returns;
    batch.old_values = values;
  } else {
    at::Tensor seq_scores = kl_in_reward ? scores - kl_coef * kl.sum(1) : scores;
    at::Tensor adv;
    if (algorithm_ == "grpo") {
      adv = algo::group_advantages(seq_scores, group, ppo.grpo_scale_std);
    } else {
      SamplingOptions greedy = so;
      greedy.greedy = true;
      t0 = Clock::now();
      std::vector<TokenIds> base =
          generate_call(context("actor_greedy_gen"), *actor_->model, prompts, greedy);
      record("actor_greedy_gen", t0);
      SequenceBatch base_seqs = make_sequence_batch(prompts, base, codec_.pad_id());
      at::Tensor base_scores = score(base, base_seqs, "reward_greedy_inf");
      if (ppo.reward_clip > 0) base_scores = base_scores.clamp(-ppo.reward_clip, ppo.reward_clip);
      adv = algo::remax_advantages(seq_scores, base_scores);
    }
    batch.advantages = algo::broadcast_to_tokens(adv, mask);
  }

  ActorOptions ao;
  ao.clip_eps = ppo.clip_eps;
  ao.kl_loss_coef = kl_in_reward ? 0.0 : kl_coef;
  ao.kl_estimator = est;
  ao.entropy_coef = ppo.entropy_coef;
  ao.early_stop_kl = ppo.early_stop_kl;
  ao.epochs = bs.epochs;
  ao.mini_batches = bs.mini_batches;
  t0 = Clock::now();
  ActorStats as = actor_train_call(context("actor_train"), *actor_, batch, ao);
  record("actor_train", t0);
  CriticStats cs;
  if (critic_) {
    t0 = Clock::now();
    cs = critic_train_call(context("critic_train"), *critic_, batch, ppo.value_clip, bs.epochs,
                           bs.mini_batches);
    record("critic_train", t0);
  }

  double resp_tokens = mask.sum().item<double>();
  std::vector<double> m = dp_mean(
      context("metrics"), {raw_scores.mean().item<double>(), raw_scores.std(false).item<double>(),
                           algo::masked_mean(kl, mask).item<double>(), kl.sum(1).mean().item<double>(),
                           resp_tokens / double(std::max<int64_t>(seqs.size(), 1)),
                           values.defined() ? algo::masked_mean(values, mask).item<double>() : 0.0});
  if (ppo.adaptive_kl) kl_ctl_->update(m[3], bs.prompts * group);
  Json j{{"reward/mean", m[0]},
         {"reward/std", m[1]},
         {"kl/mean", m[2]},
         {"kl/sequence", m[3]},
         {"kl/coef", kl_coef},
         {"loss/policy", as.policy_loss},
         {"entropy", as.entropy},
         {"clip_fraction", as.clip_fraction},
         {"approx_kl", as.approx_kl},
         {"grad_norm/actor", as.grad_norm},
         {"lr", as.lr},
         {"updates", as.updates},
         {"response/length", m[4]}};
  if (ao.kl_loss_coef > 0) j["loss/kl"] = as.kl_loss;
  if (as.early_stopped) j["early_stopped"] = true;
  if (critic_) {
    j["loss/value"] = cs.value_loss;
    j["value/mean"] = m[5];
    j["grad_norm/critic"] = cs.grad_norm;
  }
  return j;
}

TrainResult Trainer::run() {
  auto wall0 = Clock::now();
  algorithm_ = in_.algorithm.algorithm;
  if (t_.threads > 0) {
    at::set_num_threads(int(t_.threads));
  } else {
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    at::set_num_threads(std::max(1, int(hw) / world_->size()));
  }
  if (in_.algorithm.batch.prompts < world_->size())
    throw Error("batch.prompts", std::to_string(in_.algorithm.batch.prompts) +
                                     " prompts cannot be split over " + std::to_string(world_->size()) +
                                     " data-parallel ranks");
  data_ = load_task_data(in_.sections.data, t_.eval_prompts);
  build_stages();
  if (stages_.empty()) throw Error("train.steps", "nothing to run: every stage has 0 steps");
  for (const Stage& s : stages_) {
    if ((s.kind == "sft") && data_.sft.empty())
      throw Error("data.sft", "the SFT stage needs SFT pairs (data.sft)");
    if ((s.kind == "rm" || s.kind == "dpo") && data_.preferences.empty())
      throw Error("data.preferences", "the " + s.kind + " stage needs preference pairs (data.preferences)");
    if (s.kind == "rl" && data_.prompts.empty())
      throw Error("data.prompts", "RL needs prompts (data.prompts)");
  }
  build_models();
  prompt_sampler_ = std::make_unique<data::EpochSampler>(std::max<int64_t>(1, int64_t(data_.prompts.size())),
                                                         mix_seed(t_.seed, 10, 0));
  sft_sampler_ = std::make_unique<data::EpochSampler>(std::max<int64_t>(1, int64_t(data_.sft.size())),
                                                      mix_seed(t_.seed, 11, 0));
  pref_sampler_ = std::make_unique<data::EpochSampler>(
      std::max<int64_t>(1, int64_t(data_.preferences.size())), mix_seed(t_.seed, 12, 0));

  RunDir dir{in_.run_dir};
  const int64_t total = stages_.back().first + stages_.back().steps - 1;
  int64_t done = 0;
  TrainResult result;
  result.run_dir = in_.run_dir;
  if (in_.resume) {
    std::optional<int64_t> latest = latest_checkpoint_step(dir.checkpoints());
    if (latest) {
      if (*latest > total)
        throw Error(in_.run_dir, "its latest checkpoint is step " + std::to_string(*latest) +
                                     " but the run has only " + std::to_string(total) + " steps");
      enter_stage(stage_of(*latest), false);
      restore_loop_state(load_train_checkpoint(dir.checkpoints(), *latest, slots()));
      done = *latest;
      if (done < total && stage_of(done + 1) != current_stage_) enter_stage(stage_of(done + 1), true);
    } else {
      enter_stage(0, true);
    }
    if (lead()) {
      truncate_metrics_after(dir.metrics_file(), done);
      write_text_file(dir.config_file(), in_.raw_config.dump(2) + "\n");  // with this resume's overrides
    }
  } else {
    enter_stage(0, true);
    if (lead()) {
      write_text_file(dir.config_file(), in_.raw_config.dump(2) + "\n");
      if (!in_.plan.is_null()) write_text_file(dir.plan_file(), in_.plan.dump(2) + "\n");
      if (!in_.estimated_timeline.is_null())
        write_text_file(in_.run_dir + "/timeline_estimated.json", in_.estimated_timeline.dump(2) + "\n");
      std::filesystem::remove(dir.metrics_file());
    }
  }
  world_->barrier();
  std::unique_ptr<data::JsonlWriter> metrics;
  if (lead()) metrics = std::make_unique<data::JsonlWriter>(dir.metrics_file(), true);
  if (done == 0) {
    double acc = evaluate();
    result.eval_before = acc;
    if (lead() && acc >= 0)
      metrics->write(Json{{"step", 0}, {"stage", stages_[0].kind}, {"eval/accuracy", acc}});
  }
  ProgressBar bar(algorithm_, total, done, stderr, stderr_is_tty(), 2.0);
  result.first_step = done + 1;
  bool rl_seen = false;
  for (int64_t step = done + 1; step <= total; ++step) {
    int stage = stage_of(step);
    if (stage != current_stage_) enter_stage(stage, true);
    const Stage& s = stages_[size_t(stage)];
    step_start_ = Clock::now();
    step_events_.clear();
    Json m = s.kind == "sft"   ? sft_step(step)
             : s.kind == "rm"  ? rm_step(step)
             : s.kind == "dpo" ? dpo_step(step)
                               : rl_step(step);
    double step_s = std::chrono::duration<double>(Clock::now() - step_start_).count();
    Json rec{{"step", step}, {"stage", s.kind}};
    for (auto& [k, v] : m.items()) rec[k] = v;
    for (const TimelineEvent& e : step_events_) {
      std::string key = "time/" + e.name + "_s";
      rec[key] = rec.value(key, 0.0) + (e.end_s - e.start_s);
    }
    rec["time/step_s"] = step_s;
    rec["realloc/bytes"] = 0;  // every call runs in the one co-located layout
    bool stage_end = step == s.first + s.steps - 1;
    if (stage_end || (t_.eval_every > 0 && step % t_.eval_every == 0)) {
      double acc = evaluate();
      if (acc >= 0) rec["eval/accuracy"] = acc;
      if (step == total) result.eval_after = acc;
      if (stage + 1 < int(stages_.size()) &&
          (stages_[size_t(stage) + 1].kind == "rl" || stages_[size_t(stage) + 1].kind == "dpo"))
        result.eval_before_rl = acc;
    }
    if (s.kind == "rl") {
      if (!rl_seen) result.reward_first = m["reward/mean"].get<double>();
      rl_seen = true;
      result.reward_last = m["reward/mean"].get<double>();
      last_timeline_ = Timeline{world_->size(), step_events_};
    } else if (!rl_seen) {
      last_timeline_ = Timeline{world_->size(), step_events_};
    }
    if (lead()) {
      metrics->write(rec);  // the time/* fields differ between runs; every other field is deterministic
      write_text_file(dir.progress_file(), std::to_string(step) + "/" + std::to_string(total) + "\n");
      std::vector<std::pair<std::string, double>> fields;
      for (auto [key, label] : {std::pair{"reward/mean", "reward"},
                                {"kl/mean", "kl"},
                                {"loss/sft", "loss"},
                                {"loss/reward_model", "loss"},
                                {"loss/dpo", "loss"},
                                {"eval/accuracy", "eval"}})
        if (rec.contains(key)) fields.emplace_back(label, rec[key].get<double>());
      if (in_.progress) bar.update(step, fields);
    }
    bool checkpoint = step == total || (t_.checkpoint_every > 0 && step % t_.checkpoint_every == 0);
    if (checkpoint) {
      if (lead()) save_train_checkpoint(dir.checkpoints(), step, slots(), loop_state());
      world_->barrier();
    }
    result.last_step = step;
    if (in_.stop_after > 0 && step >= in_.stop_after) break;
  }
  if (in_.progress) bar.finish();
  if (lead()) {
    write_text_file(dir.timeline_file(), to_json(last_timeline_).dump(2) + "\n");
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - wall0).count();
  return result;
}

}  // namespace

TrainResult run_training(const TrainerInput& input, std::shared_ptr<comm::Group> world) {
  Trainer trainer(input, std::move(world));
  return trainer.run();
}

}  // namespace realign::runtime
