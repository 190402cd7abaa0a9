#include <gtest/gtest.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/read_file.h"
#include "data/jsonl.h"
#include "testing/temp_dir.h"
#include "train/curves_svg.h"
#include "train/metrics_log.h"
#include "train/progress_bar.h"
#include "train/report.h"
#include "train/run_dir.h"

namespace realign::train {
namespace {
using testing::TempDir;

TEST(MetricsLog, TruncateKeepsStepsUpToTheCheckpoint) {
  TempDir tmp;
  std::string path = tmp.file("metrics.jsonl");
  {
    data::JsonlWriter w(path);
    for (int s = 1; s <= 5; ++s) w.write(Json{{"step", s}, {"reward/mean", 0.1 * s}});
  }
  truncate_metrics_after(path, 3);
  auto records = read_metrics(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records.back()["step"], 3);
  EXPECT_TRUE(read_metrics(tmp.file("absent.jsonl")).empty());
}

TEST(ProgressBar, RendersStepFieldsAndEta) {
  ProgressBar bar("ppo", 10, 0, stderr, false);
  std::string line = bar.render(5, {{"reward", 0.5}, {"kl", 0.01}}, 10.0);
  EXPECT_NE(line.find("5/10"), std::string::npos) << line;
  EXPECT_NE(line.find("reward 0.5"), std::string::npos) << line;
  EXPECT_NE(line.find("kl 0.01"), std::string::npos) << line;
  EXPECT_NE(line.find("2.0s/it ETA 10.0s"), std::string::npos) << line;
  // A resumed run's ETA counts only its own steps.
  ProgressBar resumed("ppo", 10, 4, stderr, false);
  EXPECT_NE(resumed.render(5, {}, 3.0).find("3.0s/it ETA 15.0s"), std::string::npos);
  EXPECT_EQ(format_duration(125), "2m05s");
}

TEST(ProgressBar, PlainLinesWhenNotATerminal) {
  TempDir tmp;
  std::FILE* f = std::fopen(tmp.file("out").c_str(), "w+");
  ProgressBar bar("sft", 3, 0, f, false);
  for (int s = 1; s <= 3; ++s) bar.update(s, {{"loss", 1.0 / s}});
  bar.finish();
  std::fclose(f);
  std::string text = testing::read_file(tmp.file("out"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(Report, DrawsCurvesAndTimeline) {
  TempDir tmp;
  RunDir dir = create_run_dir(tmp.file("run"));
  {
    data::JsonlWriter w(dir.metrics_file());
    for (int s = 1; s <= 4; ++s) w.write(Json{{"step", s}, {"reward/mean", 0.2 * s}, {"kl/mean", 0.01}});
  }
  write_text_file(
      dir.timeline_file(),
      R"({"version":1,"n_devices":1,"events":[{"name":"actor_gen","kind":"call","first_device":0,)"
      R"("n_devices":1,"start_s":0,"end_s":1.5,"bytes":0}]})");
  auto files = write_report(dir.root);
  ASSERT_EQ(files.size(), 2u);
  std::string curves = read_file(files[0]);
  EXPECT_NE(curves.find("reward (mean)"), std::string::npos);
  EXPECT_NE(curves.find("<path d=\"M"), std::string::npos);
  EXPECT_EQ(curves.find("value loss"), std::string::npos);  // not recorded, not drawn
  EXPECT_NE(read_file(files[1]).find("actor_gen"), std::string::npos);
  EXPECT_THROW(write_report(tmp.file("nothing")), Error);
}

TEST(RunDir, ResumeNeedsAConfig) {
  TempDir tmp;
  EXPECT_THROW(open_run_dir(tmp.path()), Error);
  RunDir d = create_run_dir(tmp.file("r"));
  write_text_file(d.config_file(), "{}");
  EXPECT_EQ(open_run_dir(d.root).root, d.root);
}

}  // namespace
}  // namespace realign::train
