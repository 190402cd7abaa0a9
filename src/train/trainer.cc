#include "train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
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
#include "runtime/call_placement.h"
#include "runtime/json_broadcast.h"
#include "runtime/row_exchange.h"
#include "train/checkpoint_store.h"
#include "train/full_checkpoint_slots.h"
#include "train/generate_call.h"
#include "train/inference_calls.h"
#include "train/metrics_log.h"
#include "train/progress_bar.h"
#include "train/run_dir.h"
#include "train/task_data.h"
#include "train/text_codec.h"
#include "train/train_calls.h"
#include "train/train_checkpoint.h"

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

template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<int64_t>& idx, int64_t begin, int64_t end) {
  std::vector<T> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(all[size_t(idx[size_t(i)])]);
  return out;
}

// Token lists as batch rows: `name` (rows, longest) zero-padded and `name`_len (rows).
Rows token_rows(const std::string& name, const std::vector<TokenIds>& lists) {
  std::vector<int64_t> lengths;
  int64_t longest = 0;
  for (const TokenIds& l : lists) {
    lengths.push_back(int64_t(l.size()));
    longest = std::max<int64_t>(longest, int64_t(l.size()));
  }
  at::Tensor tokens = at::zeros({int64_t(lists.size()), longest}, at::kLong);
  for (size_t i = 0; i < lists.size(); ++i)
    if (!lists[i].empty())
      tokens[int64_t(i)].narrow(0, 0, int64_t(lists[i].size())).copy_(at::tensor(lists[i], at::kLong));
  return Rows{{name, tokens}, {name + "_len", at::tensor(lengths, at::kLong)}};
}

std::vector<TokenIds> token_lists(const Rows& rows, const std::string& name) {
  std::vector<TokenIds> out;
  auto it = rows.find(name);
  if (it == rows.end()) return out;
  const at::Tensor tokens = it->second.contiguous(), lengths = rows.at(name + "_len").contiguous();
  for (int64_t i = 0; i < tokens.size(0); ++i) {
    const int64_t n = lengths[i].item<int64_t>();
    const int64_t* row = tokens[i].data_ptr<int64_t>();
    out.emplace_back(row, row + n);
  }
  return out;
}

// (B, T') per-token rows brought to the T columns of a local batch (rows arrive padded to the longest
// sender).
at::Tensor fit_columns(const at::Tensor& x, int64_t T) {
  if (x.dim() < 2 || x.size(1) == T) return x;
  if (x.size(1) > T) return x.narrow(1, 0, T).contiguous();
  return at::constant_pad_nd(x, {0, T - x.size(1)}, 0);
}

// Every rank's rows of a (B) per-sequence tensor assembled into the whole batch's (n) on every rank.
at::Tensor gather_rows(comm::Group& world, const at::Tensor& mine, const Range& rows, int64_t n) {
  at::Tensor all = at::zeros({n}, at::kDouble);
  all.narrow(0, rows.begin, rows.size()).copy_(mine.to(at::kDouble));
  world.all_reduce_sum(all);
  return all.to(mine.scalar_type());
}

// (x - mean) / std over the masked entries of every rank's rows (advantage whitening independent of the
// split).
at::Tensor global_masked_whiten(comm::Group& world, const at::Tensor& x, const at::Tensor& mask) {
  at::Tensor sums = at::stack({(x * mask).sum(), (x * x * mask).sum(), mask.sum()}).to(at::kDouble);
  world.all_reduce_sum(sums);
  const double n = std::max(1.0, sums[2].item<double>()), mean = sums[0].item<double>() / n;
  const double var = std::max(0.0, sums[1].item<double>() / n - mean * mean) * n / std::max(1.0, n - 1);
  return (x - mean) / std::sqrt(var + 1e-8);
}

class Trainer {
 public:
  Trainer(const TrainerInput& in, std::unique_ptr<CallPlacement> place)
      : in_(in),
        t_(in.sections.train),
        place_(std::move(place)),
        world_(place_->global_ptr()),
        codec_(TextCodec::bytes()) {}

  TrainResult run();

 private:
  bool lead() const { return world_->rank() == 0; }
  int rank() const { return world_->rank(); }
  // Rows of an n-row batch that this rank handles in `call`'s layout.
  Range rows_in(const std::string& call, const std::string& role, int64_t n) const {
    return samples_of(n, place_->layout_of(call, role), rank());
  }
  const ModelSpec& spec(const std::string& role) const;
  ModelShape shape(const std::string& role) const;
  // This rank's shards of `role`'s model in its home layout; null on a rank outside the home.
  model::Transformer* held(const std::string& role) const;
  using CallBody = CallPlacement::CallBody;
  void run(const std::string& call, const std::string& role, const CallBody& body) {
    place_->run_call(call, role, shape(role), held(role), body);
  }
  // (call, role, body) of calls that do not depend on each other, run together (CallPlacement::run_calls).
  struct Call {
    std::string call, role;
    CallBody body;
  };
  void run_together(const std::vector<Call>& calls) {
    std::vector<CallPlacement::CallRun> runs;
    for (const Call& c : calls)
      runs.push_back(
          {c.call, c.role, place_->layout_of(c.call, c.role), shape(c.role), held(c.role), c.body});
    place_->run_calls(runs);
  }
  // A call's statistics (set on its ranks) on every rank, from the call's first rank.
  Json from_call(const std::string& call, const std::string& role, const Json& stats) {
    return broadcast_json(*world_, stats, place_->layout_of(call, role).first_device);
  }
  // Null on a rank outside `role`'s home layout.
  std::unique_ptr<model::Transformer> make_model(const std::string& role, HeadKind head, uint64_t seed);
  void build_stages();
  void build_models();
  int stage_of(int64_t step) const;
  void enter_stage(int index, bool fresh);
  std::vector<PlacedSlot> placed_slots();
  Json loop_state() const;
  void restore_loop_state(const Json& s);
  int64_t rl_optimizer_steps() const;

  // One RL iteration's rows: row i answers prompt idx[i / group]; every rank can build any row's prompt, and
  // responses and model outputs move between the calls' layouts by row (CallPlacement).
  struct RlRows {
    std::vector<int64_t> idx;
    int64_t group = 1, n = 0;
  };
  const data::PromptRecord& record_of(const RlRows& rows, int64_t i) const {
    return data_.prompts[size_t(rows.idx[size_t(i / rows.group)])];
  }
  std::vector<TokenIds> prompts_of(const RlRows& rows, const Range& r) const;
  // Generation calls run together (ReMax's sampled and greedy generations overlap on disjoint devices): each
  // call's responses on this rank's rows of the batch.
  std::vector<std::vector<TokenIds>> generate(
      const RlRows& rows, const std::vector<std::pair<std::string, SamplingOptions>>& calls);
  // An inference call over `responses` (every rank's rows of the batch): (rows) or (rows, T) outputs.
  using InferFn = std::function<at::Tensor(const CallContext&, model::Transformer&, const SequenceBatch&)>;
  struct Inference {
    std::string call, role;
    InferFn fn;
    const std::vector<TokenIds>* responses;
  };
  // Inference calls run together (they depend only on the responses, so calls on disjoint devices overlap):
  // call name -> its output on this rank's rows of the batch, per-token outputs fitted to T columns.
  std::map<std::string, at::Tensor> infer(const RlRows& rows, const std::vector<Inference>& calls, int64_t T);
  // `batch` (this rank's rows of the batch layout) moved to a train call's layout (its home): each dp rank
  // gets its share of every mini-batch (train_calls.h), and the PpoBatch is rebuilt there (empty elsewhere).
  PpoBatch train_batch(const RlRows& rows, const std::string& call, const std::string& role,
                       const std::vector<TokenIds>& responses, const PpoBatch& batch);

  Json sft_step(int64_t step);
  Json rm_step(int64_t step);
  Json rl_step(int64_t step);
  Json dpo_step(int64_t step);
  double evaluate();

  TrainerInput in_;
  const TrainConfig& t_;
  std::unique_ptr<CallPlacement> place_;
  std::shared_ptr<comm::Group> world_;
  TextCodec codec_;
  TaskData data_;
  std::vector<Stage> stages_;
  int current_stage_ = -1;
  std::string algorithm_;

  // Present on every rank when the algorithm uses the model; the Transformer (and optimizer) inside only on
  // the ranks of its home layout.
  std::unique_ptr<TrainedModel> actor_, critic_, reward_;
  bool has_ref_ = false;
  std::unique_ptr<model::Transformer> ref_;  // null outside the reference's home
  std::unique_ptr<data::EpochSampler> prompt_sampler_, sft_sampler_, pref_sampler_;
  std::unique_ptr<algo::AdaptiveKlController> kl_ctl_;

  Timeline last_timeline_;
};

const ModelSpec& Trainer::spec(const std::string& role) const {
  auto it = in_.algorithm.models.find(role);
  if (it == in_.algorithm.models.end()) it = in_.algorithm.models.find("actor");
  REALIGN_CHECK(it != in_.algorithm.models.end()) << "no spec for role " << role;
  return it->second;
}

HeadKind head_of(const std::string& role) {
  return role == "critic" || role == "reward" ? HeadKind::kValue : HeadKind::kLanguageModel;
}

ModelShape Trainer::shape(const std::string& role) const {
  return ModelShape{spec(role), head_of(role), t_.dtype == "bf16" ? at::kBFloat16 : at::kFloat,
                    at::Device(at::kCPU)};
}

model::Transformer* Trainer::held(const std::string& role) const {
  if (role == "ref") return ref_.get();
  const TrainedModel* m = role == "actor" ? actor_.get() : role == "critic" ? critic_.get() : reward_.get();
  REALIGN_CHECK(m) << "the algorithm has no " << role << " model";
  return m->model.get();
}

std::unique_ptr<model::Transformer> Trainer::make_model(const std::string& role, HeadKind head,
                                                        uint64_t seed) {
  const ModelSpec& s = spec(role);
  if (s.vocab < codec_.vocab_size())
    throw Error("models." + role, "vocabulary of " + std::to_string(s.vocab) +
                                      " tokens is smaller than the " + std::to_string(codec_.vocab_size()) +
                                      " the tokenizer needs");
  REALIGN_CHECK(head == head_of(role)) << role;
  const at::ScalarType dtype = shape(role).dtype;
  // Built in its home layout: a rank there holds its (tp, pp) shards, any other rank nothing. Initialisation
  // and loading are per parameter name and slice, so the values do not depend on the layout.
  const Layout home = place_->home(role);
  if (!home.contains(rank())) return nullptr;
  const Layout::Coord c = home.coord_of(rank());
  const std::optional<CallContext> ctx = place_->context(role, home);
  auto m = std::make_unique<model::Transformer>(s, head, model::ParallelContext{ctx->tp, c.pp, home.pp},
                                                dtype, at::Device(at::kCPU));
  auto dir = in_.model_dirs.find(role);
  if (dir != in_.model_dirs.end()) {
    model::LoadOptions lo;
    lo.value_head_seed = seed;
    m->load_shards(model::load_hf_shards(dir->second, s, head, {c.tp, home.tp, c.pp, home.pp}, dtype, lo),
                   true);
  } else {
    m->load_shards(model::init_rank_params(s, head, seed, c.tp, home.tp, c.pp, home.pp), true);
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
    // Outside the model's home the rank holds neither parameters nor optimizer state.
    if (model) *m = make_trained_model(std::move(model), t_.optim, 1);
    return m;
  };
  if (a != "rm") actor_ = trained("actor", HeadKind::kLanguageModel, t_.seed);
  if (a == "rm" || (rl && in_.sections.reward.kind == "model"))
    reward_ = trained("reward", HeadKind::kValue, mix_seed(t_.seed, 2, 0));
  has_ref_ = rl || a == "dpo";
  if (has_ref_) ref_ = make_model("ref", HeadKind::kLanguageModel, t_.seed);
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
    if (m.model) m.optim = std::make_unique<AdamW>(m.model->named_params(), c, steps);
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
  // Each lives in its own home layout: the actor's parameters are reallocated there (collective over both
  // homes; a rank in neither takes no part).
  const ShardMap actor_held = actor_ && actor_->model ? actor_->model->named_params() : ShardMap{};
  auto from_actor = [&](const std::string& role) {
    ShardMover mover(model_params(spec("actor"), HeadKind::kLanguageModel), spec("actor").n_layers,
                     shape("actor").dtype);
    return mover.move(*world_, actor_held, place_->home("actor"), place_->home(role));
  };
  if ((s.kind == "rl" || s.kind == "dpo") && has_ref_ && spec("ref") == spec("actor") &&
      !in_.model_dirs.count("ref")) {
    const ShardMap shards = from_actor("ref");
    if (ref_) ref_->load_shards(shards, false);
  }
  if (s.kind == "rl" && critic_ && spec("critic") == spec("actor") && !in_.model_dirs.count("critic")) {
    const ShardMap trunk = from_actor("critic");  // with the actor's head, which the critic does not load
    if (critic_->model) critic_->model->load_shards(trunk, false);
  }
}

std::vector<PlacedSlot> Trainer::placed_slots() {
  std::vector<PlacedSlot> out;
  auto add = [&](const std::string& role, model::Transformer* m, AdamW* optim, bool trained) {
    out.push_back({ModelSlot{role, m, optim}, place_->home(role), shape(role), trained});
  };
  if (actor_) add("actor", actor_->model.get(), actor_->optim.get(), true);
  if (critic_) add("critic", critic_->model.get(), critic_->optim.get(), true);
  if (reward_) add("reward", reward_->model.get(), reward_->optim.get(), true);
  if (has_ref_) add("ref", ref_.get(), nullptr, false);
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

double Trainer::evaluate() {
  if (!actor_ || data_.eval_prompts.empty()) return -1;
  const int64_t n = int64_t(data_.eval_prompts.size());
  double sums[2] = {0, 0};
  // Evaluation is not a call of the plan: it generates on the actor's home devices, pipeline stages folded
  // into data parallelism (KV-cache decoding needs pp = 1).
  const Layout home = place_->home("actor");
  const Layout layout{home.first_device, home.dp * home.pp, home.tp, 1};
  const auto body = [&](const CallContext& ctx, model::Transformer& m) {
    const Range r = samples_of(n, layout, rank());
    std::vector<data::PromptRecord> local(data_.eval_prompts.begin() + r.begin,
                                          data_.eval_prompts.begin() + r.end);
    std::vector<TokenIds> prompts;
    for (const auto& p : local) prompts.push_back(codec_.encode(p.prompt));
    SamplingOptions o;
    o.greedy = true;
    o.max_new_tokens = in_.algorithm.batch.gen_len;
    o.stop_tokens = codec_.stop_tokens();
    o.pad_id = codec_.pad_id();
    std::vector<TokenIds> responses =
        prompts.empty() ? std::vector<TokenIds>{} : generate_call(ctx, m, prompts, o);
    std::vector<std::string> texts;
    for (const TokenIds& t : responses) texts.push_back(codec_.decode(t));
    // Tensor-parallel replicas generate the same rows: count each row once.
    if (ctx.tp->rank() != 0) return;
    for (double v : rule_rewards(RewardConfig{}, local, texts)) sums[0] += v;
    sums[1] += double(local.size());
  };
  place_->run_calls({{"eval_gen", "actor", layout, shape("actor"), held("actor"), body}});
  at::Tensor t = at::tensor({sums[0], sums[1]}, at::kDouble);
  world_->all_reduce_sum(t);
  return t[0].item<double>() / std::max(1.0, t[1].item<double>());
}

Json Trainer::sft_step(int64_t) {
  int64_t n = algorithm_ == "sft" ? in_.algorithm.batch.prompts : t_.sft_stage.batch;
  std::vector<int64_t> idx = sft_sampler_->next(n);
  Json stats;
  run("actor_train", "actor", [&](const CallContext& ctx, model::Transformer&) {
    const Range r = rows_in("actor_train", "actor", n);
    std::vector<TokenIds> p, q;
    for (const auto& rec : pick(data_.sft, idx, r.begin, r.end))
      p.push_back(codec_.encode(rec.prompt)), q.push_back(codec_.encode(rec.response));
    const SftStats st = sft_train_call(ctx, *actor_, make_sequence_batch(p, q, codec_.pad_id()));
    stats = Json{{"loss/sft", st.loss}, {"grad_norm/actor", st.grad_norm}, {"lr", st.lr}};
  });
  return from_call("actor_train", "actor", stats);
}

// Preference rows [r.begin, r.end) of this step's sample: prompts with chosen and rejected responses.
struct PreferenceRows {
  SequenceBatch chosen, rejected;
};

Json Trainer::rm_step(int64_t) {
  int64_t n = algorithm_ == "rm" ? in_.algorithm.batch.prompts : t_.reward_model_stage.batch;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  Json stats;
  run("reward_train", "reward", [&](const CallContext& ctx, model::Transformer&) {
    const Range r = rows_in("reward_train", "reward", n);
    std::vector<TokenIds> p, c, q;
    for (const auto& rec : pick(data_.preferences, idx, r.begin, r.end)) {
      p.push_back(codec_.encode(rec.prompt));
      c.push_back(codec_.encode(rec.chosen));
      q.push_back(codec_.encode(rec.rejected));
    }
    const PairStats st = reward_model_train_call(ctx, *reward_, make_sequence_batch(p, c, codec_.pad_id()),
                                                 make_sequence_batch(p, q, codec_.pad_id()));
    stats = Json{{"loss/reward_model", st.loss},
                 {"rm/accuracy", st.accuracy},
                 {"rm/margin", st.margin},
                 {"grad_norm/reward", st.grad_norm}};
  });
  return from_call("reward_train", "reward", stats);
}

Json Trainer::dpo_step(int64_t) {
  int64_t n = in_.algorithm.batch.prompts;
  std::vector<int64_t> idx = pref_sampler_->next(n);
  auto pairs = [&](const Range& r) {
    std::vector<TokenIds> p, c, q;
    for (const auto& rec : pick(data_.preferences, idx, r.begin, r.end)) {
      p.push_back(codec_.encode(rec.prompt));
      c.push_back(codec_.encode(rec.chosen));
      q.push_back(codec_.encode(rec.rejected));
    }
    return PreferenceRows{make_sequence_batch(p, c, codec_.pad_id()),
                          make_sequence_batch(p, q, codec_.pad_id())};
  };
  // The reference's summed log-probs, computed on its layout and brought to the policy's.
  Rows ref_out;
  run("ref_inf", "ref", [&](const CallContext& ctx, model::Transformer& m) {
    const PreferenceRows b = pairs(rows_in("ref_inf", "ref", n));
    ref_out["chosen"] = sum_over_response(logprobs_call(ctx, m, b.chosen), b.chosen);
    ref_out["rejected"] = sum_over_response(logprobs_call(ctx, m, b.rejected), b.rejected);
  });
  const Rows on_batch = place_->rows_from("ref_inf", place_->layout_of("ref_inf", "ref"), n, ref_out);
  const Rows on_policy =
      place_->rows_to("actor_train", place_->layout_of("actor_train", "actor"), n, on_batch);
  Json stats;
  run("actor_train", "actor", [&](const CallContext& ctx, model::Transformer&) {
    const PreferenceRows b = pairs(rows_in("actor_train", "actor", n));
    const PairStats st = dpo_train_call(ctx, *actor_, b.chosen, b.rejected, on_policy.at("chosen"),
                                        on_policy.at("rejected"), t_.dpo_beta, t_.dpo_label_smoothing);
    stats = Json{{"loss/dpo", st.loss},
                 {"dpo/accuracy", st.accuracy},
                 {"dpo/margin", st.margin},
                 {"grad_norm/actor", st.grad_norm}};
  });
  return from_call("actor_train", "actor", stats);
}

std::vector<TokenIds> Trainer::prompts_of(const RlRows& rows, const Range& r) const {
  std::vector<TokenIds> out;
  for (int64_t i = r.begin; i < r.end; ++i) out.push_back(codec_.encode(record_of(rows, i).prompt));
  return out;
}

std::vector<std::vector<TokenIds>> Trainer::generate(
    const RlRows& rows, const std::vector<std::pair<std::string, SamplingOptions>>& calls) {
  const int64_t n = rows.n;
  std::vector<Rows> produced(calls.size());
  std::vector<Call> runs;
  for (size_t k = 0; k < calls.size(); ++k)
    runs.push_back({calls[k].first, "actor", [&, k](const CallContext& ctx, model::Transformer& m) {
                      const auto& [call, options] = calls[k];
                      const Range r = rows_in(call, "actor", n);
                      SamplingOptions o = options;
                      for (int64_t i = r.begin; i < r.end; ++i)
                        o.row_seeds.push_back(mix_seed(options.seed, uint64_t(i), 1));
                      const std::vector<TokenIds> p = prompts_of(rows, r);
                      produced[k] = token_rows(
                          "response", p.empty() ? std::vector<TokenIds>{} : generate_call(ctx, m, p, o));
                    }});
  run_together(runs);
  std::vector<std::vector<TokenIds>> out;
  for (size_t k = 0; k < calls.size(); ++k)
    out.push_back(token_lists(
        place_->rows_from(calls[k].first, place_->layout_of(calls[k].first, "actor"), n, produced[k]),
        "response"));
  return out;
}

std::map<std::string, at::Tensor> Trainer::infer(const RlRows& rows, const std::vector<Inference>& calls,
                                                 int64_t T) {
  const int64_t n = rows.n;
  std::vector<Rows> in, out(calls.size());
  for (const Inference& c : calls)
    in.push_back(
        place_->rows_to(c.call, place_->layout_of(c.call, c.role), n, token_rows("response", *c.responses)));
  std::vector<Call> runs;
  for (size_t k = 0; k < calls.size(); ++k)
    runs.push_back({calls[k].call, calls[k].role, [&, k](const CallContext& ctx, model::Transformer& m) {
                      const std::vector<TokenIds> r = token_lists(in[k], "response");
                      if (r.empty()) return;
                      const SequenceBatch b = make_sequence_batch(
                          prompts_of(rows, rows_in(calls[k].call, calls[k].role, n)), r, codec_.pad_id());
                      out[k]["y"] = calls[k].fn(ctx, m, b);
                    }});
  run_together(runs);
  std::map<std::string, at::Tensor> ys;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Layout layout = place_->layout_of(calls[k].call, calls[k].role);
    ys[calls[k].call] = fit_columns(place_->rows_from(calls[k].call, layout, n, out[k]).at("y"), T);
  }
  return ys;
}

PpoBatch Trainer::train_batch(const RlRows& rows, const std::string& call, const std::string& role,
                              const std::vector<TokenIds>& responses, const PpoBatch& batch) {
  const int64_t n = rows.n;
  const Range mine = samples_of(n, place_->batch_layout(), rank());
  Rows fields = token_rows("response", responses);
  fields["index"] = at::arange(mine.begin, mine.end, at::kLong);
  fields["old_logprobs"] = batch.old_logprobs;
  fields["ref_logprobs"] = batch.ref_logprobs;
  fields["advantages"] = batch.advantages;
  if (batch.returns.defined()) fields["returns"] = batch.returns, fields["old_values"] = batch.old_values;
  const Layout layout = place_->layout_of(call, role);
  const Rows got =
      place_->rows_to(call, layout, n, fields, mini_batch_count(n, in_.algorithm.batch.mini_batches));
  PpoBatch b;
  if (!layout.contains(rank())) return b;  // the call runs elsewhere
  std::vector<TokenIds> p;
  if (got.count("index")) {
    const at::Tensor index = got.at("index").contiguous();
    for (int64_t k = 0; k < index.size(0); ++k)
      p.push_back(codec_.encode(record_of(rows, index[k].item<int64_t>()).prompt));
  }
  b.seqs = make_sequence_batch(p, token_lists(got, "response"), codec_.pad_id());
  const int64_t t = b.seqs.batch.tokens.size(1);
  auto field = [&](const char* name) {
    return got.count(name) ? fit_columns(got.at(name), t) : at::Tensor();
  };
  b.old_logprobs = field("old_logprobs");
  b.ref_logprobs = field("ref_logprobs");
  b.advantages = field("advantages");
  b.returns = field("returns");
  b.old_values = field("old_values");
  return b;
}

Json Trainer::rl_step(int64_t step) {
  const BatchShape& bs = in_.algorithm.batch;
  const PpoConfig& ppo = t_.ppo;
  const int64_t group = algorithm_ == "grpo" ? std::max<int64_t>(1, bs.samples_per_prompt) : 1;
  const std::vector<int64_t> idx = prompt_sampler_->next(bs.prompts);
  const RlRows rows_of_step{idx, group, bs.prompts * group};
  const int64_t n = rows_of_step.n;
  const Range mine = samples_of(n, place_->batch_layout(), rank());
  std::vector<data::PromptRecord> records;
  for (int64_t i = mine.begin; i < mine.end; ++i) records.push_back(record_of(rows_of_step, i));
  const std::vector<TokenIds> prompts = prompts_of(rows_of_step, mine);

  SamplingOptions so;
  so.max_new_tokens = bs.gen_len;
  so.temperature = t_.sampling.temperature;
  so.top_p = t_.sampling.top_p;
  so.top_k = t_.sampling.top_k;
  so.stop_tokens = codec_.stop_tokens();
  so.pad_id = codec_.pad_id();
  so.seed = mix_seed(t_.seed, uint64_t(step), 0);
  std::vector<std::pair<std::string, SamplingOptions>> generations{{"actor_gen", so}};
  if (algorithm_ == "remax") {
    SamplingOptions greedy = so;
    greedy.greedy = true;
    generations.push_back({"actor_greedy_gen", greedy});
  }
  const std::vector<std::vector<TokenIds>> generated = generate(rows_of_step, generations);
  const std::vector<TokenIds>& responses = generated[0];
  // ReMax's baseline: the greedy responses (empty for other algorithms).
  const std::vector<TokenIds> greedy_responses =
      algorithm_ == "remax" ? generated[1] : std::vector<TokenIds>{};
  SequenceBatch seqs = make_sequence_batch(prompts, responses, codec_.pad_id());
  const at::Tensor& mask = seqs.response_mask;
  const int64_t T = seqs.batch.tokens.size(1);

  const InferFn reward_scores = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return scores_call(ctx, m, b);
  };
  const InferFn logprobs = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return logprobs_call(ctx, m, b);
  };
  const InferFn critic_values = [](const CallContext& ctx, model::Transformer& m, const SequenceBatch& b) {
    return values_call(ctx, m, b);
  };
  // Responses cut at gen_len (no stop token at the end) lose ppo.missing_stop_penalty from their score.
  auto with_stop_penalty = [&](const at::Tensor& scores, const std::vector<TokenIds>& resp) {
    if (ppo.missing_stop_penalty <= 0) return scores;
    return scores - missing_stop_penalties(resp, codec_.stop_tokens(), ppo.missing_stop_penalty);
  };
  auto rule_scores = [&](const std::vector<TokenIds>& resp) {
    std::vector<std::string> texts;
    for (const TokenIds& r : resp) texts.push_back(codec_.decode(r));
    return at::tensor(rule_rewards(in_.sections.reward, records, texts), at::kDouble).to(at::kFloat);
  };
  std::vector<Inference> inferences;
  if (reward_) inferences.push_back({"reward_inf", "reward", reward_scores, &responses});
  if (reward_ && algorithm_ == "remax")
    inferences.push_back({"reward_greedy_inf", "reward", reward_scores, &greedy_responses});
  inferences.push_back({"ref_inf", "ref", logprobs, &responses});
  inferences.push_back({"actor_inf", "actor", logprobs, &responses});
  if (critic_) inferences.push_back({"critic_inf", "critic", critic_values, &responses});
  const std::map<std::string, at::Tensor> inferred = infer(rows_of_step, inferences, T);
  at::Tensor scores =
      with_stop_penalty(reward_ ? inferred.at("reward_inf") : rule_scores(responses), responses);
  const at::Tensor raw_scores = scores.clone();
  const at::Tensor ref_lp = inferred.at("ref_inf"), old_lp = inferred.at("actor_inf");
  const at::Tensor values = critic_ ? inferred.at("critic_inf") : at::Tensor();

  algo::KlEstimator est = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  at::Tensor kl = algo::kl_per_token(old_lp, ref_lp, est) * mask;
  const double kl_coef = kl_ctl_->coef();
  // Normalisation and advantages use the whole batch (every rank's rows), so they do not depend on the split.
  if (ppo.reward_clip > 0) scores = scores.clamp(-ppo.reward_clip, ppo.reward_clip);
  if (ppo.reward_norm && n > 1) {
    const at::Tensor all = gather_rows(*world_, scores, mine, n);
    scores = (scores - all.mean()) / (all.std() + 1e-8);
  }

  PpoBatch batch;
  batch.seqs = seqs;
  batch.old_logprobs = old_lp;
  batch.ref_logprobs = ref_lp;
  const bool kl_in_reward = ppo.kl_mode == "reward";
  if (algorithm_ == "ppo") {
    at::Tensor rewards = algo::token_rewards(scores, kl, mask, kl_in_reward ? kl_coef : 0.0);
    algo::GaeResult g = algo::gae(rewards, values, mask, ppo.gamma, ppo.lambda);
    batch.advantages =
        ppo.whiten_advantages ? global_masked_whiten(*world_, g.advantages, mask) * mask : g.advantages;
    batch.returns = g.returns;
    batch.old_values = values;
  } else {
    at::Tensor seq_scores = kl_in_reward ? scores - kl_coef * kl.sum(1) : scores;
    const at::Tensor all_scores = gather_rows(*world_, seq_scores, mine, n);
    at::Tensor adv;
    if (algorithm_ == "grpo") {
      adv = algo::group_advantages(all_scores, group, ppo.grpo_scale_std);
    } else {
      at::Tensor base_scores = with_stop_penalty(
          reward_ ? inferred.at("reward_greedy_inf") : rule_scores(greedy_responses), greedy_responses);
      if (ppo.reward_clip > 0) base_scores = base_scores.clamp(-ppo.reward_clip, ppo.reward_clip);
      adv = algo::remax_advantages(all_scores, gather_rows(*world_, base_scores, mine, n));
      // While samples are mostly worse than the greedy answer, r - r_greedy is mostly negative: unwhitened,
      // the update mostly pushes sampled tokens down, entropy grows and the policy collapses on small models.
      // Whitening over the whole batch keeps the greedy baseline's ranking and centres the step.
      if (ppo.whiten_advantages && n > 1) adv = (adv - adv.mean()) / (adv.std() + 1e-8);
    }
    batch.advantages = algo::broadcast_to_tokens(adv.narrow(0, mine.begin, mine.size()), mask);
  }

  ActorOptions ao;
  ao.clip_eps = ppo.clip_eps;
  ao.kl_loss_coef = kl_in_reward ? 0.0 : kl_coef;
  ao.kl_estimator = est;
  ao.entropy_coef = ppo.entropy_coef;
  ao.early_stop_kl = ppo.early_stop_kl;
  ao.epochs = bs.epochs;
  ao.mini_batches = bs.mini_batches;

  // The actor and critic updates run together (on disjoint devices they overlap); their statistics come from
  // each call's first rank (a call may run on a subset of the ranks).
  Json actor_stats, critic_stats = Json::object();
  const PpoBatch actor_batch = train_batch(rows_of_step, "actor_train", "actor", responses, batch);
  const PpoBatch critic_batch =
      critic_ ? train_batch(rows_of_step, "critic_train", "critic", responses, batch) : PpoBatch{};
  std::vector<Call> updates{{"actor_train", "actor", [&](const CallContext& ctx, model::Transformer&) {
                               const ActorStats as = actor_train_call(ctx, *actor_, actor_batch, ao);
                               actor_stats = Json{{"loss/policy", as.policy_loss},
                                                  {"entropy", as.entropy},
                                                  {"clip_fraction", as.clip_fraction},
                                                  {"approx_kl", as.approx_kl},
                                                  {"grad_norm/actor", as.grad_norm},
                                                  {"lr", as.lr},
                                                  {"updates", as.updates}};
                               if (ao.kl_loss_coef > 0) actor_stats["loss/kl"] = as.kl_loss;
                               if (as.early_stopped) actor_stats["early_stopped"] = true;
                             }}};
  if (critic_)
    updates.push_back(
        {"critic_train", "critic", [&](const CallContext& ctx, model::Transformer&) {
           const CriticStats cs =
               critic_train_call(ctx, *critic_, critic_batch, ppo.value_clip, bs.epochs, bs.mini_batches);
           critic_stats = Json{{"loss/value", cs.value_loss}, {"grad_norm/critic", cs.grad_norm}};
         }});
  run_together(updates);
  actor_stats = from_call("actor_train", "actor", actor_stats);
  if (critic_) critic_stats = from_call("critic_train", "critic", critic_stats);

  // Batch statistics over every rank's rows (sums, then ratios), so they do not depend on how many ranks
  // split the batch.
  const at::Tensor x = raw_scores.to(at::kDouble);
  at::Tensor sums =
      at::stack({x.sum(), (x * x).sum(), (kl * mask).sum().to(at::kDouble), kl.sum(1).sum().to(at::kDouble),
                 mask.sum().to(at::kDouble),
                 values.defined() ? (values * mask).sum().to(at::kDouble) : at::zeros({}, at::kDouble)});
  world_->all_reduce_sum(sums);
  auto total = [&](int i) { return sums[i].item<double>(); };
  const double rows = double(std::max<int64_t>(n, 1)), tokens = std::max(1.0, total(4));
  const double reward_mean = total(0) / rows;
  const std::vector<double> m{
      reward_mean,       std::sqrt(std::max(0.0, total(1) / rows - reward_mean * reward_mean)),
      total(2) / tokens, total(3) / rows,
      total(4) / rows,   total(5) / tokens};
  if (ppo.adaptive_kl) kl_ctl_->update(m[3], bs.prompts * group);
  Json j{{"reward/mean", m[0]}, {"reward/std", m[1]}, {"kl/mean", m[2]},
         {"kl/sequence", m[3]}, {"kl/coef", kl_coef}, {"response/length", m[4]}};
  j.update(actor_stats);
  j.update(critic_stats);
  if (critic_) j["value/mean"] = m[5];
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
      const std::vector<PlacedSlot> placed = placed_slots();
      const FullCheckpointSlots full = FullCheckpointSlots::for_loading(rank(), placed);
      restore_loop_state(load_train_checkpoint(dir.checkpoints(), *latest, full.slots()));
      full.scatter(rank(), placed);
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
    const Clock::time_point step_start = Clock::now();
    place_->begin_step();
    Json m = s.kind == "sft"   ? sft_step(step)
             : s.kind == "rm"  ? rm_step(step)
             : s.kind == "dpo" ? dpo_step(step)
                               : rl_step(step);
    double step_s = std::chrono::duration<double>(Clock::now() - step_start).count();
    const Timeline timeline = place_->gathered_timeline();
    Json rec{{"step", step}, {"stage", s.kind}};
    for (auto& [k, v] : m.items()) rec[k] = v;
    double realloc_bytes = 0, data_bytes = 0;
    for (const TimelineEvent& e : timeline.events) {
      if (e.kind == "realloc") realloc_bytes += e.bytes;
      if (e.kind == "data") data_bytes += e.bytes;
      if (e.kind != "call") continue;
      std::string key = "time/" + e.name + "_s";
      rec[key] = rec.value(key, 0.0) + (e.end_s - e.start_s);
    }
    rec["time/step_s"] = step_s;
    rec["realloc/bytes"] = realloc_bytes;
    rec["data/bytes"] = data_bytes;
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
      last_timeline_ = timeline;
    } else if (!rl_seen) {
      last_timeline_ = timeline;
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
      // ZeRO-1 keeps each dp rank's share of the optimizer state: bring it whole before saving.
      for (auto [role, m] :
           {std::pair{"actor", actor_.get()}, {"critic", critic_.get()}, {"reward", reward_.get()}})
        if (m && m->optim) gather_optimizer_state(*place_->context(role, place_->home(role)), *m);
      const FullCheckpointSlots full = FullCheckpointSlots::gather(*world_, placed_slots());
      if (lead()) save_train_checkpoint(dir.checkpoints(), step, full.slots(), loop_state());
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

TrainResult run_training(const TrainerInput& input, comm::World& world) {
  auto place = std::make_unique<CallPlacement>(
      world.global(), [&world](const Layout& layout) { return world.axis_groups(layout); }, input.layouts);
  Trainer trainer(input, std::move(place));
  return trainer.run();
}

TrainResult run_training(const TrainerInput& input, std::shared_ptr<comm::Group> world) {
  if (!input.layouts.call.empty() && world->size() > 1)
    throw Error("plan", "per-call layouts need the multi-process entry (run_training with a comm::World)");
  const std::shared_ptr<comm::Group> dp = world;
  // Only the co-located layout exists here: dp over the group, tp = pp = 1.
  auto groups = [dp](const Layout& layout) -> std::optional<comm::AxisGroups> {
    if (layout.tp != 1 || layout.pp != 1 || layout.dp != dp->size() || layout.first_device != 0)
      throw Error("plan", to_string(layout) + ": only the co-located layout runs without a comm::World");
    comm::AxisGroups g;
    g.dp = dp;
    g.tp = g.pp = comm::single_rank_group();
    return g;
  };
  auto place = std::make_unique<CallPlacement>(world, groups, CallLayouts{});
  Trainer trainer(input, std::move(place));
  return trainer.run();
}

}  // namespace realign::runtime
