// Checkpoint and exact resume: models, optimizer state and the loop's state (samplers, KL coefficient).
#include <optional>

#include "core/error.h"
#include "train/checkpoint_store.h"
#include "train/detail/train_checkpoint.h"
#include "train/detail/trainer_impl.h"

namespace realign::runtime {

int64_t Trainer::resume_from(const RunDir& dir, int64_t total) {
  // Rank 0 alone reads the run directory (other nodes need not see it) and hands the others the checkpoint's
  // step, the loop's state and their shards of every model.
  Json head;
  if (lead()) {
    const std::optional<int64_t> latest = latest_checkpoint_step(dir.checkpoints());
    if (latest && *latest > total)
      throw Error(in_.run_dir, "its latest checkpoint is step " + std::to_string(*latest) +
                                   " but the run has only " + std::to_string(total) + " steps");
    head = Json{{"step", latest ? *latest : int64_t(0)}};
  }
  const int64_t done = broadcast_json(*world_, head, 0)["step"].get<int64_t>();
  if (done == 0) {
    enter_stage(0, true);
    return 0;
  }
  enter_stage(stage_of(done), false);
  const std::vector<PlacedSlot> placed = placed_slots();
  const FullCheckpointSlots full = FullCheckpointSlots::for_loading(rank(), placed);
  const Json loop = lead() ? load_train_checkpoint(dir.checkpoints(), done, full.slots()) : Json();
  restore_loop_state(broadcast_json(*world_, loop, 0));
  full.scatter(*world_, placed);
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
