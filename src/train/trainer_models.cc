// The trainer's models: their specs and shapes by role, built (initialised or loaded) in their home layouts,
// and the checkpoint slots they fill.
#include "core/check.h"
#include "core/error.h"
#include "model/checkpoint.h"
#include "model/init.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

const ModelSpec& Trainer::spec(Role role) const {
  auto it = input_.algorithm.models.find(role);
  if (it == input_.algorithm.models.end()) it = input_.algorithm.models.find(Role::kActor);
  REALIGN_CHECK(it != input_.algorithm.models.end()) << "no spec for role " << role;
  return it->second;
}

namespace {

HeadKind head_of(Role role) {
  return role == Role::kCritic || role == Role::kReward ? HeadKind::kValue : HeadKind::kLanguageModel;
}

// The seed of a role's initial weights (and of a loaded model's fresh value head): the reference starts as
// the actor, from the run's seed; the value models draw their own streams.
uint64_t seed_of(Role role, uint64_t run_seed) {
  switch (role) {
    case Role::kActor:
    case Role::kRef:
      return run_seed;
    case Role::kCritic:
      return mix_seed(run_seed, 1, 0);
    case Role::kReward:
      return mix_seed(run_seed, 2, 0);
  }
  return run_seed;
}

}  // namespace

runtime::ModelShape Trainer::shape(Role role) const {
  return runtime::ModelShape{spec(role), head_of(role), runtime::torch_dtype(placement_),
                             runtime::torch_device(placement_)};
}

runtime::TrainedModel& Trainer::trained(Role role) const {
  auto it = models_.trained.find(role);
  REALIGN_CHECK(it != models_.trained.end()) << "the algorithm trains no " << role << " model";
  return *it->second;
}

model::Transformer* Trainer::home_shards(Role role) const {
  auto it = models_.frozen.find(role);
  if (it != models_.frozen.end()) return it->second.get();
  return trained(role).model.get();
}

std::unique_ptr<model::Transformer> Trainer::make_model(Role role) {
  const ModelSpec& s = spec(role);
  if (s.vocab < codec_.vocab_size())
    throw Error("models." + to_string(role),
                "vocabulary of " + std::to_string(s.vocab) + " tokens is smaller than the " +
                    std::to_string(codec_.vocab_size()) + " the tokenizer needs");
  const HeadKind head = head_of(role);
  const at::ScalarType dtype = shape(role).dtype;
  // Built in its home layout: a rank there holds its (tp, pp) shards, any other rank nothing. Initialisation
  // and loading are per parameter name and slice, so the values do not depend on the layout.
  const Layout home = place_->home(role);
  if (!home.contains(rank())) return nullptr;
  const Layout::Coord c = home.coord_of(rank());
  const std::optional<runtime::CallContext> ctx = place_->context(to_string(role), home);
  // ep > 1 (a mixture-of-experts model): the rank holds whole experts, those of its ep rank.
  const int ep_rank = ctx->ep ? ctx->ep->rank() : 0;
  auto m = std::make_unique<model::Transformer>(
      s, head, model::ParallelContext{ctx->tp, c.pp, home.pp, ctx->ep}, dtype, shape(role).device);
  const uint64_t seed = seed_of(role, train_config_.seed);
  auto dir = input_.model_dirs.find(role);
  if (dir != input_.model_dirs.end()) {
    model::LoadOptions lo;
    lo.value_head_seed = seed;
    m->load_shards(model::load_hf_shards(dir->second, s, head,
                                         {c.tp, home.tp, c.pp, home.pp, ep_rank, home.ep}, dtype, lo),
                   true);
  } else {
    m->load_shards(model::init_rank_params(s, head, seed, c.tp, home.tp, c.pp, home.pp, {}, ep_rank, home.ep),
                   true);
  }
  return m;
}

void Trainer::build_models() {
  const Algorithm a = algorithm_;
  const bool rl = is_rl(a);
  auto add_trained = [&](Role role) {
    auto m = std::make_unique<runtime::TrainedModel>();
    auto model = make_model(role);
    // The optimizer is replaced by enter_stage(); this one only gives the slot a state of the right shape.
    // Outside the model's home the rank holds neither parameters nor optimizer state.
    if (model) *m = runtime::make_trained_model(std::move(model), train_config_.optim, 1);
    models_.trained[role] = std::move(m);
  };
  // Always in this order: building a model creates (and caches) its home's process groups, which the ranks
  // of a layout must do in the same order.
  if (a != Algorithm::kRm) add_trained(Role::kActor);
  if (a == Algorithm::kRm || (rl && input_.sections.reward.kind == "model")) add_trained(Role::kReward);
  if ((rl && input_.algorithm.reference) || a == Algorithm::kDpo)
    models_.frozen[Role::kRef] = make_model(Role::kRef);
  if (a == Algorithm::kPpo) add_trained(Role::kCritic);
  kl_ctl_ = std::make_unique<algo::AdaptiveKlController>(
      train_config_.ppo.kl_coef, train_config_.ppo.kl_target, train_config_.ppo.kl_horizon);
}

std::vector<PlacedSlot> Trainer::placed_slots() {
  // Trained models first (actor, critic, reward: Role's order), then the reference, as checkpoints list them.
  std::vector<PlacedSlot> out;
  auto add = [&](Role role, model::Transformer* m, runtime::AdamW* optim, bool trained) {
    out.push_back({ModelSlot{role, m, optim}, place_->home(role), shape(role), trained});
  };
  for (const auto& [role, m] : models_.trained) add(role, m->model.get(), m->optim.get(), true);
  for (const auto& [role, m] : models_.frozen) add(role, m.get(), nullptr, false);
  return out;
}

}  // namespace realign::train
