#include "train/report.h"

#include <filesystem>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/read_file.h"
#include "cost/simulation_result.h"
#include "cost/timeline_svg.h"
#include "train/curves_svg.h"
#include "train/metrics_log.h"
#include "train/run_dir.h"

namespace realign::train {
namespace fs = std::filesystem;

std::vector<CurvePanel> report_panels() {
  return {{"reward/mean", "reward (mean)"},
          {"eval/accuracy", "held-out accuracy (greedy)"},
          {"kl/mean", "KL to the reference (per token)"},
          {"loss/policy", "policy loss"},
          {"loss/value", "value loss"},
          {"loss/sft", "SFT loss"},
          {"loss/reward_model", "reward-model loss"},
          {"rm/accuracy", "reward-model accuracy"},
          {"loss/dpo", "DPO loss"},
          {"entropy", "policy entropy (per token)"},
          {"response/length", "response length (tokens)"},
          // SFT steps and RL iterations differ in size: each stage on its own scale.
          {"time/step_s", "seconds per step", true}};
}

std::vector<std::string> write_report(const std::string& run_dir, const std::string& out_dir_arg) {
  RunDir dir{run_dir};
  if (!fs::exists(dir.metrics_file()))
    throw Error(run_dir, "no metrics.jsonl: not a run directory, or no step finished");
  std::string out_dir = out_dir_arg.empty() ? run_dir : out_dir_arg;
  fs::create_directories(out_dir);
  std::vector<std::string> written;
  const std::vector<CurvePanel> panels = report_panels();
  std::vector<Json> records = read_metrics(dir.metrics_file());
  std::string curves = out_dir + "/curves.svg";
  write_text_file(curves,
                  curves_svg(records, panels, "realign run " + fs::path(run_dir).filename().string()));
  written.push_back(curves);

  auto load_timeline = [](const std::string& path) {
    Json j;
    try {
      j = Json::parse(read_file(path));
    } catch (const Json::exception& e) {
      throw Error(path, std::string("not valid JSON: ") + e.what());
    }
    return timeline_from_json(j, path);
  };
  if (fs::exists(dir.timeline_file())) {
    Timeline measured = load_timeline(dir.timeline_file());
    std::string estimated_path = run_dir + "/timeline_estimated.json";
    std::string svg =
        fs::exists(estimated_path)
            ? timeline_comparison_svg(load_timeline(estimated_path), measured, "estimated vs measured")
            : timeline_svg(measured, "measured timeline (one iteration)");
    std::string path = out_dir + "/timeline.svg";
    write_text_file(path, svg);
    written.push_back(path);
  }
  return written;
}

}  // namespace realign::train
