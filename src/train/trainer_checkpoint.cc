// Checkpoint and exact resume: models, optimizer state and the loop's state (samplers, KL coefficient).
#include <optional>

#include "core/error.h"
#include "train/checkpoint_store.h"
#include "train/detail/train_checkpoint.h"
#include "train/detail/trainer_impl.h"

namespace realign::runtime {

int64_t Trainer::resume_from(const RunDir& dir, int64_t total) {
  std::optional<int64_t> latest = latest_checkpoint_step(dir.checkpoints());
  if (!latest) {
    enter_stage(0, true);
    return 0;
  }
  if (*latest > total)
    throw Error(in_.run_dir, "its latest checkpoint is step " + std::to_string(*latest) +
                                 " but the run has only " + std::to_string(total) + " steps");
  enter_stage(stage_of(*latest), false);
  const std::vector<PlacedSlot> placed = placed_slots();
  const FullCheckpointSlots full = FullCheckpointSlots::for_loading(rank(), placed);
  restore_loop_state(load_train_checkpoint(dir.checkpoints(), *latest, full.slots()));
  full.scatter(rank(), placed);
  const int64_t done = *latest;
  if (done < total && stage_of(done + 1) != current_stage_) enter_stage(stage_of(done + 1), true);
  return done;
}

void Trainer::save_checkpoint(const RunDir& dir, int64_t step) {
  // ZeRO-1 keeps each dp rank's share of the optimizer state: bring it whole before saving.
  for (auto [role, m] :
       {std::pair{"actor", actor_.get()}, {"critic", critic_.get()}, {"reward", reward_.get()}})
    if (m && m->optim) gather_optimizer_state(*place_->context(role, place_->home(role)), *m);
  const FullCheckpointSlots full = FullCheckpointSlots::gather(*world_, placed_slots());
  if (lead()) save_train_checkpoint(dir.checkpoints(), step, full.slots(), loop_state());
  world_->barrier();
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

}  // namespace realign::runtime
