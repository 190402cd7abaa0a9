// `realign validate` end to end on 2 local workers: plans run in rounds, measured and estimated times and
// each call's estimate split by coefficient group come out as JSON, and the calibrated profile (call groups
// and the iteration overhead) loads and re-scores the same runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/atomic_file.h"
#include "core/config_file.h"
#include "core/json.h"
#include "core/read_file.h"
#include "cost/calibration.h"
#include "cost/hardware_profile.h"
#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;

// Kendall's tau of two plans' estimated and measured times: +1, -1, or 0 for a tie.
double order_agreement(const Json& plans) {
  const double estimated =
      plans[0].at("estimated_s").get<double>() - plans[1].at("estimated_s").get<double>();
  const double measured = plans[0].at("measured_s").get<double>() - plans[1].at("measured_s").get<double>();
  return estimated * measured > 0 ? 1 : estimated * measured < 0 ? -1 : 0;
}

// The last line of the output: --json's object (progress goes to stderr, before it).
Json last_json_line(const std::string& out) {
  std::istringstream lines(out);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return Json::parse(last);
}

TEST(Validate, RunsPlansInRoundsAndCalibratesTheirIterationTimes) {
  TempDir tmp;
  const std::string dir = tmp.file("validate"), cal = tmp.file("cal.json");
  const std::string text_command = "validate " + std::string(REALIGN_SOURCE_DIR) +
                                   "/examples/addition_ppo.yaml cluster.devices_per_node=2 batch.prompts=8 "
                                   "train.threads=1 --plans 2 --steps 3 --out " +
                                   dir;
  const std::string command = text_command + " --json";
  std::string out;
  ASSERT_EQ(testing::run_realign(command + " --rounds 2 --calibrate " + cal, &out), 0) << out;
  const Json report = last_json_line(out);
  ASSERT_EQ(report.at("plans").size(), 2u) << out;
  std::vector<double> call_errors;
  for (const Json& plan : report.at("plans")) {
    const std::string name = plan.at("name");
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name + "/metrics.jsonl")) << name;
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name + ".run2/metrics.jsonl")) << name;
    EXPECT_GT(plan.at("measured_s").get<double>(), 0) << name;
    EXPECT_GT(plan.at("estimated_s").get<double>(), 0) << name;
    for (const Json& call : plan.at("calls")) {
      ASSERT_TRUE(call.contains("measured_s")) << call.dump();
      const double estimated = call.at("estimated_s"), measured = call.at("measured_s");
      EXPECT_NEAR(call.at("error").get<double>(), std::abs(estimated - measured) / measured, 1e-12);
      call_errors.push_back(call.at("error"));
      double parts = 0;
      for (const std::string& group : calibration_groups())
        parts += call.at("parts_s").at(group).get<double>();
      EXPECT_GE(parts, 0.99 * call.at("estimated_s").get<double>()) << call.dump();
    }
  }
  // The per-call median: the middle of the calls' errors (an even count averages the two middle ones).
  std::sort(call_errors.begin(), call_errors.end());
  const size_t half = call_errors.size() / 2;
  EXPECT_NEAR(report.at("call_median_abs_error").get<double>(),
              call_errors.size() % 2 ? call_errors[half] : (call_errors[half - 1] + call_errors[half]) / 2,
              1e-12);
  // Kendall's tau over 2 plans: 1 where the estimate orders them as measured, -1 where it swaps them.
  EXPECT_EQ(report.at("kendall_tau").get<double>(), order_agreement(report.at("plans"))) << out;
  const HardwareProfile fitted = load_hardware_profile(cal);
  EXPECT_NEAR(fitted.iteration_overhead_s.value,
              report.at("calibration").at("iteration_overhead_s").get<double>(), 1e-12);
  EXPECT_NE(fitted.iteration_overhead_s.source.find("calibrated"), std::string::npos);

  // The machine's host probe is kept beside the runs, and a re-score carries the profile by it, not by a new
  // timing (which moves by a few percent): the in-sample figures below repeat.
  EXPECT_TRUE(std::filesystem::exists(dir + "/host_probe_s.json"));
  // Every run was given that probe (train --host-probe-s) rather than timing its own: each run's report
  // carries the profile by the same figure.
  const double kept_s = load_config_file(dir + "/host_probe_s.json").at("host_probe_s").get<double>();
  char probe_text[64];
  std::snprintf(probe_text, sizeof probe_text, "its host probe %.2f ms", kept_s * 1e3);
  for (const Json& plan : report.at("plans"))
    for (const std::string run : {"", ".run2"}) {
      const std::string log = dir + "/" + plan.at("name").get<std::string>() + run + ".log";
      EXPECT_NE(read_file(log).find(probe_text), std::string::npos) << log << " lacks '" << probe_text << "'";
    }
  // Re-scored with the fitted profile: the same pooled measurements, new estimates.
  ASSERT_EQ(testing::run_realign(command + " --rescore profile=" + cal, &out), 0) << out;
  const Json again = last_json_line(out);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(again.at("plans")[i].at("measured_s"), report.at("plans")[i].at("measured_s")) << i;
  EXPECT_NE(again.at("plans")[0].at("estimated_s"), report.at("plans")[0].at("estimated_s"));
  EXPECT_EQ(again.at("kendall_tau").get<double>(), order_agreement(again.at("plans"))) << out;
  // The calibration's own in-sample figures are those of its written profile.
  EXPECT_EQ(again.at("kendall_tau"), report.at("calibration").at("kendall_tau"));
  EXPECT_NEAR(again.at("median_abs_error").get<double>(),
              report.at("calibration").at("median_abs_error").get<double>(), 1e-9);

  // The calibration's notes name exactly the groups it left at a bound of the fit (a factor of 1e-3 or 1e4).
  for (const auto& [group, scale] : report.at("calibration").at("scales").items()) {
    const double s = scale.get<double>();
    const bool at_bound = std::abs(std::log(s / 1e-3)) < 1e-5 || std::abs(std::log(s / 1e4)) < 1e-5;
    bool noted = false;
    for (const Json& note : report.at("calibration").at("notes"))
      noted |= note.get<std::string>().rfind(group + " (", 0) == 0;
    EXPECT_EQ(noted, at_bound) << group << " x" << s;
  }
  // A damaged or negative kept probe is refused naming the file, not read as another machine's.
  write_text_file(dir + "/host_probe_s.json", "{\"host_probe_s\": ");
  EXPECT_NE(testing::run_realign(command + " --rescore", &out), 0);
  EXPECT_NE(out.find("host_probe_s.json"), std::string::npos) << out;
  write_text_file(dir + "/host_probe_s.json", "{\"host_probe_s\": -1}");
  EXPECT_NE(testing::run_realign(command + " --rescore", &out), 0);
  EXPECT_NE(out.find("host_probe_s.json.host_probe_s"), std::string::npos) << out;
  write_text_file(dir + "/host_probe_s.json", "{\"host_probe_s\": 0.0064}");

  // From a profile whose per-call overhead (100 s) no measured call comes near, the fit stops at its floor,
  // and validate's table says so, naming the coefficient.
  HardwareProfile slow = fitted;
  slow.call_overhead_s.value = 100;
  write_text_file(tmp.file("slow.json"), to_json(slow).dump());
  ASSERT_EQ(testing::run_realign(text_command + " --rescore --calibrate " + tmp.file("cal2.json") +
                                     " profile=" + tmp.file("slow.json"),
                                 &out),
            0)
      << out;
  EXPECT_NE(
      out.find("warning: call (call_overhead_s): the fitted time factor x0.001 is the fit's lower bound"),
      std::string::npos)
      << out;
}

}  // namespace
}  // namespace realign
