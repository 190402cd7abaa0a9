// The trainer's models: their specs and shapes by role, built (initialised or loaded) in their home layouts,
// and the checkpoint slots they fill.
#include "core/check.h"
#include "core/error.h"
#include "model/checkpoint.h"
#include "model/init.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

const ModelSpec& Trainer::spec(const std::string& role) const {
  auto it = input_.algorithm.models.find(role);
  if (it == input_.algorithm.models.end()) it = input_.algorithm.models.find("actor");
  REALIGN_CHECK(it != input_.algorithm.models.end()) << "no spec for role " << role;
  return it->second;
}

namespace {

HeadKind head_of(const std::string& role) {
  return role == "critic" || role == "reward" ? HeadKind::kValue : HeadKind::kLanguageModel;
}

}  // namespace

runtime::ModelShape Trainer::shape(const std::string& role) const {
  return runtime::ModelShape{spec(role), head_of(role),
                             train_config_.dtype == "bf16" ? at::kBFloat16 : at::kFloat,
                             at::Device(at::kCPU)};
}

runtime::TrainedModel& Trainer::trained(const std::string& role) const {
  runtime::TrainedModel* m = role == "actor"    ? actor_.get()
                             : role == "critic" ? critic_.get()
                             : role == "reward" ? reward_.get()
                                                : nullptr;
  REALIGN_CHECK(m) << "the algorithm trains no " << role << " model";
  return *m;
}

model::Transformer* Trainer::home_shards(const std::string& role) const {
  if (role == "ref") return ref_.get();
  return trained(role).model.get();
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
  const std::optional<runtime::CallContext> ctx = place_->context(role, home);
  auto m = std::make_unique<model::Transformer>(s, head, model::ParallelContext{ctx->tp, c.pp, home.pp},
                                                dtype, at::Device(at::kCPU));
  auto dir = input_.model_dirs.find(role);
  if (dir != input_.model_dirs.end()) {
    model::LoadOptions lo;
    lo.value_head_seed = seed;
    m->load_shards(model::load_hf_shards(dir->second, s, head, {c.tp, home.tp, c.pp, home.pp}, dtype, lo),
                   true);
  } else {
    m->load_shards(model::init_rank_params(s, head, seed, c.tp, home.tp, c.pp, home.pp), true);
  }
  return m;
}

void Trainer::build_models() {
  const Algorithm a = algorithm_;
  const bool rl = is_rl(a);
  auto make_trained = [&](const std::string& role, HeadKind head, uint64_t seed) {
    auto m = std::make_unique<runtime::TrainedModel>();
    auto model = make_model(role, head, seed);
    // The optimizer is replaced by enter_stage(); this one only gives the slot a state of the right shape.
    // Outside the model's home the rank holds neither parameters nor optimizer state.
    if (model) *m = runtime::make_trained_model(std::move(model), train_config_.optim, 1);
    return m;
  };
  if (a != Algorithm::kRm) actor_ = make_trained("actor", HeadKind::kLanguageModel, train_config_.seed);
  if (a == Algorithm::kRm || (rl && input_.sections.reward.kind == "model"))
    reward_ = make_trained("reward", HeadKind::kValue, mix_seed(train_config_.seed, 2, 0));
  has_ref_ = rl || a == Algorithm::kDpo;
  if (has_ref_) ref_ = make_model("ref", HeadKind::kLanguageModel, train_config_.seed);
  if (a == Algorithm::kPpo)
    critic_ = make_trained("critic", HeadKind::kValue, mix_seed(train_config_.seed, 1, 0));
  kl_ctl_ = std::make_unique<algo::AdaptiveKlController>(
      train_config_.ppo.kl_coef, train_config_.ppo.kl_target, train_config_.ppo.kl_horizon);
}

std::vector<PlacedSlot> Trainer::placed_slots() {
  std::vector<PlacedSlot> out;
  auto add = [&](const std::string& role, model::Transformer* m, runtime::AdamW* optim, bool trained) {
    out.push_back({ModelSlot{role, m, optim}, place_->home(role), shape(role), trained});
  };
  if (actor_) add("actor", actor_->model.get(), actor_->optim.get(), true);
  if (critic_) add("critic", critic_->model.get(), critic_->optim.get(), true);
  if (reward_) add("reward", reward_->model.get(), reward_->optim.get(), true);
  if (has_ref_) add("ref", ref_.get(), nullptr, false);
  return out;
}

}  // namespace realign::train
