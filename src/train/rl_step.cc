// One RL step, shared by PPO, GRPO and ReMax, as the dataflow graph schedules it (graph/call_schedule.h):
// the step's calls in order, each call's inputs moved straight from the ranks of the calls of its iteration
// that produced them. With train.staleness N > 0 the step also generates iteration s+N (with the weights the
// step starts with), which stays in flight on its calls' ranks until its own step trains on it.
#include <ATen/ATen.h>

#include <algorithm>

#include "core/check.h"
#include "graph/call_schedule.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Json Trainer::rl_step(int64_t step) {
  const Stage& stage = stages_[size_t(current_stage_)];
  const BatchShape& bs = input_.algorithm.batch;
  const int64_t group = algorithm_ == "grpo" ? std::max<int64_t>(1, bs.samples_per_prompt) : 1;
  const int64_t n = bs.prompts * group;
  const int64_t iteration = step - stage.first + 1;
  const int64_t version = iteration - 1;  // updates done: the weights this step's calls read before its own
  const std::vector<CallInstance> calls = step_calls(graph_, iteration, stage.steps);
  // An iteration starts with its first generation: its prompts are drawn then, in iteration order, so the
  // draws do not depend on the staleness.
  for (const CallInstance& c : calls)
    if (!iterations_.count(c.iteration))
      iterations_[c.iteration] = RlIteration{{prompt_sampler_->next(bs.prompts), group, n}, version, {}};

  // The inputs whose producers ran in earlier steps move first, in one exchange: the ranks that produced them
  // (the generation's, with train.staleness > 0) are then free for this step's own calls, which run beside
  // the calls on other devices. A call's outputs then move to every later call of the step that reads them
  // as soon as it is done: a rank takes part only in the calls and moves it has a share in, in this one
  // order, so a producer's rank that also runs a long call of its own (actor_inf's, then actor_train) does
  // not hold another device's call (critic_train) back until that call is over.
  std::vector<Consumer> early;
  for (const CallInstance& c : calls)
    early.push_back(rl_consumer(c, [&](const CallInstance& producer) {
      return std::find(calls.begin(), calls.end(), producer) == calls.end();
    }));
  place_->set_iteration(iteration);  // they feed this iteration's calls
  std::vector<runtime::Rows> inputs = bring_inputs(n, early);
  std::vector<Json> update_stats(calls.size(), Json::object());
  for (size_t k = 0; k < calls.size(); ++k) {
    const CallInstance& c = calls[k];
    const Mfc& m = graph_.mfcs[size_t(c.call)];
    RlIteration& it = iterations_.at(c.iteration);
    place_->set_iteration(c.iteration);
    if (m.kind != MfcKind::kTrain)
      it.produced[m.name] = Produced{m.name, place_->layout_of(m.name, m.model), {}};
    switch (m.kind) {
      case MfcKind::kGenerate:
        run_together({generation_call(m, it, stage.first + c.iteration - 1)});
        if (!reward_) score_rule_rewards(m, it);
        break;
      case MfcKind::kInference:
        run_together({inference_call(m, it, inputs[k])});
        break;
      case MfcKind::kTrain:
        run_together({update_call(m, it, inputs[k], &update_stats[k])});
        break;
    }
    std::vector<Consumer> readers;
    std::vector<size_t> reader_at;
    for (size_t j = k + 1; j < calls.size(); ++j) {
      Consumer reader = rl_consumer(calls[j], [&](const CallInstance& producer) { return producer == c; });
      if (reader.inputs.empty()) continue;
      readers.push_back(std::move(reader));
      reader_at.push_back(j);
    }
    if (readers.empty()) continue;
    const std::vector<runtime::Rows> moved = bring_inputs(n, readers);
    for (size_t r = 0; r < readers.size(); ++r)
      for (const auto& [field, tensor] : moved[r]) inputs[reader_at[r]][field] = tensor;
  }
  // The updates' statistics, from each call's first rank: the one point where every rank meets.
  Json stats = Json::object();
  for (size_t k = 0; k < calls.size(); ++k) {
    const Mfc& m = graph_.mfcs[size_t(calls[k].call)];
    if (m.kind == MfcKind::kTrain) stats.update(broadcast_call_stats(m.name, m.model, update_stats[k]));
  }
  const RlIteration& done = iterations_.at(iteration);
  stats["weights/version"] = done.weight_version;
  stats["weights/lag"] = version - done.weight_version;
  iterations_.erase(iteration);
  if (train_config_.ppo.adaptive_kl) kl_ctl_->update(stats["kl/sequence"].get<double>(), n);
  return stats;
}

}  // namespace realign::train
