// Checkpoint and exact resume: models, optimizer state and the loop's state (samplers, KL coefficient).
#include <optional>

#include "core/error.h"
#include "train/checkpoint_store.h"
#include "train/detail/train_checkpoint.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

int64_t Trainer::resume_from(const RunDir& dir, int64_t total) {
  // Rank 0 alone reads the run directory (other nodes need not see it) and hands the others the checkpoint's
  // step, the loop's state and their shards of every model.
  Json head;
  if (is_rank0()) {
    const std::optional<int64_t> latest = latest_checkpoint_step(dir.checkpoints());
    if (latest && *latest > total)
      throw Error(input_.run_dir, "its latest checkpoint is step " + std::to_string(*latest) +
                                      " but the run has only " + std::to_string(total) + " steps");
    head = Json{{"step", latest ? *latest : int64_t(0)}};
  }
  const int64_t done = runtime::broadcast_json(*all_ranks_, head, 0)["step"].get<int64_t>();
  if (done == 0) {
    enter_stage(0, true);
    return 0;
  }
  enter_stage(stage_of(done), false);
  const std::vector<PlacedSlot> placed = placed_slots();
  const FullCheckpointSlots full = FullCheckpointSlots::for_loading(rank(), placed);
  std::map<std::string, at::Tensor> in_flight;
  const Json loop =
      is_rank0() ? load_train_checkpoint(dir.checkpoints(), done, full.slots(), &in_flight) : Json();
  const Json state = runtime::broadcast_json(*all_ranks_, loop, 0);
  restore_loop_state(state);
  full.scatter(*all_ranks_, placed);
  restore_in_flight(state.value("in_flight", Json::array()), in_flight);
  if (done < total && stage_of(done + 1) != current_stage_) enter_stage(stage_of(done + 1), true);
  return done;
}

void Trainer::save_checkpoint(const RunDir& dir, int64_t step) {
  // ZeRO-1 keeps each dp rank's share of the optimizer state: bring it whole before saving.
  for (const auto& [role, m] : models_.trained)
    if (m->optim) runtime::gather_optimizer_state(*place_->context(to_string(role), place_->home(role)), *m);
  const FullCheckpointSlots full = FullCheckpointSlots::gather(*all_ranks_, placed_slots());
  Json loop = loop_state();
  const std::map<std::string, at::Tensor> in_flight = gather_in_flight(&loop["in_flight"]);
  if (is_rank0()) save_train_checkpoint(dir.checkpoints(), step, full.slots(), loop, in_flight);
  all_ranks_->barrier();
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
  kl_ctl_->set_coef(s.value("kl_coef", train_config_.ppo.kl_coef));
}

namespace {

std::string in_flight_key(int64_t iteration, const std::string& call, const std::string& field) {
  return std::to_string(iteration) + "/" + call + "/" + field;
}

const Layout kLead{0, 1, 1, 1};  // every row on rank 0

}  // namespace

std::map<std::string, at::Tensor> Trainer::gather_in_flight(Json* meta) {
  // Each call's rows, still on its ranks, come whole to rank 0 as one exchange would bring them to a call
  // there; the tensors go to in_flight.safetensors, what they belong to into the loop state.
  *meta = Json::array();
  std::map<std::string, at::Tensor> out;
  for (const auto& [number, it] : iterations_) {
    Json calls = Json::object();
    for (const auto& [call, produced] : it.produced) {
      const runtime::Rows all =
          place_->move_rows({{call, produced.layout, kLead, it.rows.n, produced.rows, 1}}).at(0);
      calls[call] = Json::array();
      for (const auto& [field, tensor] : all) {
        out[in_flight_key(number, call, field)] = tensor;
        calls[call].push_back(field);
      }
    }
    meta->push_back(Json{{"iteration", number},
                         {"prompts", it.rows.idx},
                         {"group", it.rows.group},
                         {"weight_version", it.weight_version},
                         {"calls", calls}});
  }
  return out;
}

void Trainer::restore_in_flight(const Json& meta, const std::map<std::string, at::Tensor>& rows) {
  iterations_.clear();
  for (const Json& entry : meta) {
    const int64_t number = entry.at("iteration").get<int64_t>();
    const Stage& stage = stages_[size_t(current_stage_)];
    Iteration it;
    it.rows.idx = entry.at("prompts").get<std::vector<int64_t>>();
    it.rows.group = entry.at("group").get<int64_t>();
    it.rows.n = int64_t(it.rows.idx.size()) * it.rows.group;
    it.weight_version = entry.at("weight_version").get<int64_t>();
    it.seed_step = stage.first + number - 1;
    for (const auto& [call, fields] : entry.at("calls").items()) {
      const int index = stage.graph.mfc_index(call);
      if (index < 0)
        throw Error(input_.run_dir, "checkpoint holds rows of a call '" + call + "' this run's graph lacks");
      const Mfc& m = stage.graph.mfcs[size_t(index)];
      runtime::Rows lead_rows;
      if (is_rank0())
        for (const Json& f : fields) {
          auto found = rows.find(in_flight_key(number, call, f.get<std::string>()));
          if (found == rows.end())
            throw Error(input_.run_dir, "checkpoint lacks the in-flight rows " +
                                            in_flight_key(number, call, f.get<std::string>()));
          lead_rows[f.get<std::string>()] = found->second;
        }
      const Layout layout = place_->layout_of(call, m.model);
      it.produced[call] =
          Produced{call, layout, place_->move_rows({{call, kLead, layout, it.rows.n, lead_rows, 1}}).at(0)};
    }
    iterations_[number] = std::move(it);
  }
}

}  // namespace realign::train
