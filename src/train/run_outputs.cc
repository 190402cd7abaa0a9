// What a run writes besides checkpoints: its starting files, one metrics record per step, the progress file
// and the progress bar.
#include <filesystem>

#include "core/atomic_file.h"
#include "train/detail/trainer_impl.h"
#include "train/device_idle.h"
#include "train/metrics_log.h"

namespace realign::train {

void Trainer::write_start_files(const RunDir& dir, int64_t done) const {
  if (input_.resume) {
    truncate_metrics_after(dir.metrics_file(), done);
    write_text_file(dir.config_file(), input_.raw_config.dump(2) + "\n");  // with this resume's overrides
    return;
  }
  write_text_file(dir.config_file(), input_.raw_config.dump(2) + "\n");
  if (!input_.plan.is_null()) write_text_file(dir.plan_file(), input_.plan.dump(2) + "\n");
  if (!input_.estimated_timeline.is_null())
    write_text_file(input_.run_dir + "/timeline_estimated.json", input_.estimated_timeline.dump(2) + "\n");
  std::filesystem::remove(dir.metrics_file());
}

Json Trainer::step_record(int64_t step, const Stage& stage, const Json& step_stats, const Timeline& timeline,
                          double step_s) const {
  Json rec{{"step", step}, {"stage", stage.name()}};
  for (auto& [k, v] : step_stats.items()) rec[k] = v;
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
  // How much of the step the sampling's and the policy update's devices idled (RL steps).
  for (const Mfc& m : stage.graph.mfcs)
    if ((m.op == MfcOp::kSample && !m.greedy) || m.op == MfcOp::kPolicyUpdate)
      rec["time/idle_share/" + m.name] = idle_share(timeline, place_->layout_of(m.name, m.model), step_s);
  return rec;
}

void Trainer::report_step(const RunDir& dir, int64_t step, int64_t total, const Json& rec,
                          data::JsonlWriter& metrics, ProgressBar& bar) const {
  metrics.write(rec);  // the time/* fields differ between runs; every other field is deterministic
  write_text_file(dir.progress_file(), std::to_string(step) + "/" + std::to_string(total) + "\n");
  std::vector<std::pair<std::string, double>> fields;
  for (auto [key, label] : {std::pair{"reward/mean", "reward"},
                            {"kl/mean", "kl"},
                            {"loss/sft", "loss"},
                            {"loss/reward_model", "loss"},
                            {"loss/dpo", "loss"},
                            {"eval/accuracy", "eval"}})
    if (rec.contains(key)) fields.emplace_back(label, rec[key].get<double>());
  if (input_.progress) bar.update(step, fields);
}

}  // namespace realign::train
