// The realign binary as a user runs it: exit codes, stderr messages and the JSON contract of `plan --json`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>

#include "core/json.h"
#include "cost/hardware_profile.h"

namespace realign {
namespace {

struct CliRun {
  int code;
  std::string out;
};

// Runs a shell command line; stderr is folded into stdout.
CliRun run_command(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return CliRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs the binary.
CliRun realign(const std::string& args) {
  return run_command(std::string(REALIGN_BINARY_DIR) + "/src/apps/realign " + args);
}

std::string example(const std::string& name) { return std::string(REALIGN_SOURCE_DIR) + "/examples/" + name; }

TEST(Cli, PlanJsonHasTheDocumentedFields) {
  const CliRun r = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " plan.time_budget_s=2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  for (const char* key : {"iteration_time_s", "search_time_s", "presets", "mfcs"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* preset : {"co-located", "heuristic", "interleaving", "disaggregated"})
    EXPECT_TRUE(j["presets"].contains(preset)) << preset;
  ASSERT_EQ(j["mfcs"].size(), 7u);
  for (const auto& m : j["mfcs"])
    for (const char* key : {"name", "model", "kind", "mesh", "dp", "tp", "pp", "micro_batches", "start_s",
                            "end_s", "peak_mem_bytes"})
      EXPECT_TRUE(m.contains(key)) << key;
  // The searched plan is never slower than a preset that fits (the search starts from the best of them).
  for (const auto& [name, t] : j["presets"].items())
    if (!t.is_null()) {
      EXPECT_LE(j["iteration_time_s"].get<double>(), t.get<double>() * (1 + 1e-12)) << name;
    }
}

TEST(Cli, PlanComparesStalenessForAlgorithmsThatTakeIt) {
  // Fixed step counts (the time budget only caps them), so the searches repeat exactly.
  const CliRun r = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") +
                           " train.staleness=1 plan.max_steps=1500 plan.time_budget_s=120 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["staleness"].get<int64_t>(), 1);
  ASSERT_TRUE(j.contains("staleness_estimates")) << r.out;
  const Json& e = j["staleness_estimates"];
  for (const char* n : {"0", "1", "2"})
    ASSERT_TRUE(e.contains(n) && e[n].is_number()) << n << " " << e.dump();
  // The chosen plan is the staleness-1 entry.
  EXPECT_EQ(e["1"].get<double>(), j["iteration_time_s"].get<double>());
  // Each compared staleness planned at least as well as the plans found for the others (they are starts).
  EXPECT_GT(e["0"].get<double>(), 0);
  EXPECT_LE(e["2"].get<double>(), e["1"].get<double>() * (1 + 1e-12));
  const CliRun table = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") +
                               " train.staleness=1 plan.max_steps=300 plan.time_budget_s=120");
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.out.find("staleness 0: "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("x as fast as synchronous"), std::string::npos) << table.out;
  // DPO takes no staleness: no comparison.
  const CliRun dpo = realign("plan " + example("addition_dpo.yaml") + " --json");
  ASSERT_EQ(dpo.code, 0) << dpo.out;
  const Json d = Json::parse(dpo.out);
  EXPECT_EQ(d["staleness"].get<int64_t>(), 0);
  EXPECT_FALSE(d.contains("staleness_estimates"));
}

// Response lengths under a cap: the report names the distribution and generation's tail, compares
// streaming generation (partial rollouts) beside batch-level asynchrony on a GPU cluster, and says why each
// staleness wins or loses; the JSON carries the same.
TEST(Cli, PlanReportsTheLengthsTailAndWhyAsynchronyWinsOrLoses) {
  const std::string args = "plan " + example("ppo_llama2_7b_16xh100.yaml") +
                           " batch.gen_len_max=3072 plan.max_steps=1500 plan.time_budget_s=120";
  const CliRun r = realign(args + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  const Json& gen = j["generation"];
  EXPECT_EQ(gen["batching"], "continuous");
  EXPECT_EQ(gen["lengths"]["cap"].get<int64_t>(), 3072);
  EXPECT_DOUBLE_EQ(gen["lengths"]["mean"].get<double>(), 768);
  EXPECT_LT(gen["lengths"]["p50"].get<double>(), 768);  // a right-skewed spread under the cap
  EXPECT_GT(gen["tail_s"].get<double>(), 0.1 * gen["generation_s"].get<double>());
  const Json& e = j["staleness_estimates"];
  for (const char* k : {"0", "1", "2", "1_partial_rollout", "2_partial_rollout"})
    ASSERT_TRUE(e.contains(k) && e[k].is_number()) << k << " " << e.dump();
  // Streaming hides the tail that batch-level asynchrony still waits for.
  EXPECT_LT(e["1_partial_rollout"].get<double>(), e["1"].get<double>());
  EXPECT_LT(e["1_partial_rollout"].get<double>(), e["0"].get<double>());
  ASSERT_TRUE(j["staleness_reasons"].contains("1_partial_rollout")) << j["staleness_reasons"].dump();
  EXPECT_NE(j["staleness_reasons"]["1_partial_rollout"].get<std::string>().find("tail"), std::string::npos);
  const CliRun table = realign(args);
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.out.find("response lengths: lognormal (sigma 1.00) fitted to mean 768 and cap 3072"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("of which the tail (the last 10% of samples)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("staleness 1, partial rollouts: "), std::string::npos) << table.out;
  // The disaggregated preset, synchronously: half the devices generate while the training half waits.
  const CliRun apart = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") +
                               " plan.mode=disaggregated --json");
  ASSERT_EQ(apart.code, 0) << apart.out;
  EXPECT_NEAR(Json::parse(apart.out)["generation"]["generation_idle_share"].get<double>(), 0.5, 0.05);
  EXPECT_LT(gen["generation_idle_share"].get<double>(), 0.05);  // the searched plan generates on all 16
  // Fixed lengths (no cap above the mean): nothing to hide, no streaming entries.
  const CliRun fixed = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") +
                               " plan.max_steps=300 plan.time_budget_s=120 --json");
  ASSERT_EQ(fixed.code, 0) << fixed.out;
  EXPECT_FALSE(Json::parse(fixed.out)["staleness_estimates"].contains("1_partial_rollout"));
}

// The frontier: at least four sizes around the config's, each fitting one with its time, GPU-hours and layout;
// the Pareto points ordered by GPU-hours get faster; the config's size and the objective's pick are marked.
TEST(Cli, FrontierJsonHasTheDocumentedFieldsAndIsMonotone) {
  const CliRun r = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") +
                           " plan.max_steps=2000 plan.objective=gpu_hours --frontier --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["objective"], "gpu_hours");
  const Json& f = j["frontier"];
  ASSERT_GE(f.size(), 4u) << f.dump();
  std::vector<std::pair<double, double>> pareto;  // (GPU-hours, seconds)
  int config_sizes = 0, chosen = 0;
  for (const Json& p : f) {
    for (const char* k : {"devices", "fits", "staleness", "config_size"}) EXPECT_TRUE(p.contains(k)) << k;
    config_sizes += p["config_size"].get<bool>();
    if (!p["fits"].get<bool>()) continue;
    for (const char* k : {"iteration_time_s", "gpu_hours_per_iteration", "gpu_hours_per_1k_samples", "layout"})
      EXPECT_TRUE(p.contains(k)) << k;
    EXPECT_NEAR(p["gpu_hours_per_iteration"].get<double>(),
                p["devices"].get<double>() * p["iteration_time_s"].get<double>() / 3600, 1e-9);
    chosen += p["chosen"].get<bool>();
    if (p["pareto"].get<bool>())
      pareto.push_back({p["gpu_hours_per_iteration"].get<double>(), p["iteration_time_s"].get<double>()});
  }
  EXPECT_EQ(config_sizes, 1);
  EXPECT_EQ(chosen, 1);
  std::sort(pareto.begin(), pareto.end());
  ASSERT_GE(pareto.size(), 2u);
  for (size_t i = 1; i < pareto.size(); ++i) EXPECT_LT(pareto[i].second, pareto[i - 1].second);
  // The cheapest point is the objective's.
  for (const Json& p : f) {
    if (p["fits"].get<bool>() && p["chosen"].get<bool>()) {
      EXPECT_DOUBLE_EQ(p["gpu_hours_per_iteration"].get<double>(), pareto.front().first);
    }
  }
}

// An objective other than time on one cluster: the frontier over the sizes it holds (a quarter of it to all
// of it), then the plan of the size the objective picks, the cheapest there.
TEST(Cli, AnObjectivePicksASizeTheClusterHolds) {
  const CliRun r = realign("plan " + example("ppo_llama2_70b_128xh100.yaml") +
                           " plan.max_steps=2000 plan.objective=gpu_hours --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["objective"], "gpu_hours");
  double cheapest = 0;
  int64_t devices = 0;
  for (const Json& p : j["frontier"]) {
    EXPECT_LE(p["devices"].get<int64_t>(), 128);
    if (p["fits"].get<bool>() && (cheapest == 0 || p["gpu_hours_per_iteration"].get<double>() < cheapest))
      cheapest = p["gpu_hours_per_iteration"].get<double>(), devices = p["devices"].get<int64_t>();
  }
  EXPECT_EQ(j["devices"].get<int64_t>(), devices);  // the plan printed is the cheapest size's
  EXPECT_NEAR(j["iteration_time_s"].get<double>() * double(devices) / 3600, cheapest, 1e-6 * cheapest);
  const CliRun table = realign("plan " + example("ppo_llama2_70b_128xh100.yaml") +
                               " plan.max_steps=2000 plan.objective.time_within=1.5");
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.out.find("plan.objective time_within 1.5 picks "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("a quarter of it to all of it"), std::string::npos) << table.out;
  const CliRun bad = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " plan.objective=cost");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("plan.objective"), std::string::npos) << bad.out;
}

TEST(Cli, PartialRolloutsNeedStalenessAndAreNotTrainedByTheRuntime) {
  CliRun r = realign("plan " + example("addition_ppo.yaml") + " train.partial_rollout=true");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("train.partial_rollout"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train.staleness >= 1"), std::string::npos) << r.out;
  r = realign("train " + example("addition_ppo.yaml") +
              " train.partial_rollout=true train.staleness=1 --out " + ::testing::TempDir() + "/partial_run");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("train.partial_rollout: realign's runtime does not interrupt"), std::string::npos)
      << r.out;
}

TEST(Cli, BadStalenessIsRefusedNamingTheField) {
  CliRun r = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " train.staleness=-1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("train.staleness"), std::string::npos) << r.out;
  r = realign("plan " + example("addition_dpo.yaml") + " train.staleness=1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("train.staleness"), std::string::npos) << r.out;
}

TEST(Cli, SavedPlanSimulatesToTheSameTimeWithSvg) {
  const std::string plan = ::testing::TempDir() + "plan.json", svg = ::testing::TempDir() + "t.svg";
  const CliRun planned =
      realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " plan.max_steps=3000 --json --out " + plan);
  ASSERT_EQ(planned.code, 0) << planned.out;
  const CliRun simulated = realign("simulate " + example("grpo_qwen2.5_7b_8xh100.yaml") + " --plan " + plan +
                                   " --json --svg " + svg);
  ASSERT_EQ(simulated.code, 0) << simulated.out;
  EXPECT_DOUBLE_EQ(Json::parse(planned.out)["iteration_time_s"].get<double>(),
                   Json::parse(simulated.out)["iteration_time_s"].get<double>());
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("actor_gen"), std::string::npos);
}

TEST(Cli, ExplainListsCoefficientsWithSources) {
  const std::string plan = ::testing::TempDir() + "plan2.json";
  ASSERT_EQ(
      realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " plan.mode=co-located --out " + plan).code,
      0);
  const CliRun r =
      realign("simulate " + example("grpo_qwen2.5_7b_8xh100.yaml") + " --plan " + plan + " --explain");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gemm_efficiency"), std::string::npos) << r.out;
}

TEST(Cli, BadInputIsAClearErrorAndNonZeroExit) {
  CliRun r = realign("plan " + example("ppo_llama2_7b_16xh100.yaml") + " batch.promtps=3");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("batch.promtps: unknown key"), std::string::npos) << r.out;
  r = realign("plan /nonexistent.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("/nonexistent.yaml"), std::string::npos) << r.out;
  const std::string bad_plan = ::testing::TempDir() + "bad_plan.json";
  std::ofstream(bad_plan) << R"({"mfcs": [{"name": "actor_gen", "mesh": "0-7", "dp": 2, "tp": 3, "pp": 1}]})";
  r = realign("simulate " + example("grpo_qwen2.5_7b_8xh100.yaml") + " --plan " + bad_plan);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(bad_plan + ".mfcs[0]"), std::string::npos) << r.out;
  r = realign("plann");
  EXPECT_NE(r.code, 0);
#ifdef REALIGN_WITH_TORCH  // train, validate and profile are built with torch only
  r = realign("train " + example("addition_ppo.yaml") + " --preset-steps -1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--preset-steps: -1 is not between 0 and 1000"), std::string::npos) << r.out;
  r = realign("train " + example("addition_ppo.yaml") + " --host-probe-s -0.5");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--host-probe-s"), std::string::npos) << r.out;
#endif
}

// scripts/gpu-check.sh's --only names measurements; a misspelt one is refused listing them, before anything
// is unpacked or built (it would otherwise skip every measurement of a lent machine's short run).
TEST(Cli, GpuCheckRefusesAnUnknownOnlyStep) {
  const std::string script = std::string(REALIGN_SOURCE_DIR) + "/scripts/gpu-check.sh";
  const CliRun r = run_command("bash " + script + " --dry-run --only bench_model,mian_job " +
                               ::testing::TempDir() + "gpu_check_only");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--only: no step 'mian_job'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("main_job"), std::string::npos) << r.out;
}

#ifdef REALIGN_WITH_TORCH
TEST(Cli, TrainRefusesAPlanTheRuntimeCannotRunBeforeStartingWorkers) {
  // Recomputing activations is valid for the planner, but this runtime keeps them.
  const std::string plan = ::testing::TempDir() + "recompute_plan.json";
  std::ofstream(plan) << R"({"mfcs": [
 {"name": "actor_gen", "mesh": "0-3", "dp": 2, "tp": 1, "pp": 2},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1, "recompute": true},
 {"name": "critic_train", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1}]})";
  const std::string out = ::testing::TempDir() + "refused_run";
  const CliRun r =
      realign("train " + example("addition_ppo.yaml") +
              " cluster.devices_per_node=4 plan.mode=file plan.file=" + plan + " --no-progress --out " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("plan.mode: file: actor_train recomputes activations; realign's runtime keeps them"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan.mode=search"), std::string::npos) << r.out;
  EXPECT_FALSE(std::ifstream(out + "/plan.json").good()) << "no run directory for a refused plan";
}

TEST(Cli, ValidateRescoreWithoutEarlierRunsNamesTheFlag) {
  const std::string out = ::testing::TempDir() + "no_validate_runs";
  const CliRun r = realign("validate " + example("addition_ppo.yaml") +
                           " cluster.devices_per_node=4 --rescore --out " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--rescore: " + out + "/plans.txt not found"), std::string::npos) << r.out;
  const CliRun zero = realign("validate " + example("addition_ppo.yaml") + " --rounds 0 --out " + out);
  EXPECT_EQ(zero.code, 1) << zero.out;
  EXPECT_NE(zero.out.find("--rounds: needs at least 1 round"), std::string::npos) << zero.out;
}

#endif  // REALIGN_WITH_TORCH

// The co-located preset recomputes in train calls when planning for GPUs (as fixed-layout engines run), which
// realign's runtime does not: the table says so (a CPU config's keep activations: runtime_plans_test.cc).
TEST(Cli, PlanTableSaysWhichPresetRecomputes) {
  const CliRun r = realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " plan.max_steps=500");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t colocated = r.out.find("  co-located");
  ASSERT_NE(colocated, std::string::npos) << r.out;
  const std::string line = r.out.substr(colocated, r.out.find('\n', colocated) - colocated);
  EXPECT_NE(line.find("recomputing activations in train calls"), std::string::npos) << line;
}

TEST(Cli, PlanThatCannotFitExitsWithTwoAndSaysWhere) {
  // Four 70B models on one 8-GPU node cannot fit.
  const CliRun r =
      realign("plan " + example("ppo_llama2_70b_128xh100.yaml") + " cluster.nodes=1 plan.mode=co-located");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("needs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace realign

namespace realign {
namespace {

#ifdef REALIGN_WITH_TORCH
TEST(Cli, ProfileIsWrittenAndLoadedByPlan) {
  const std::string profile = ::testing::TempDir() + "profile.json";
  CliRun r = realign("profile --quick --threads 1 --out " + profile);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gemm_efficiency"), std::string::npos);
  r = realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " plan.max_steps=500 profile=" + profile);
  ASSERT_EQ(r.code == 0 || r.code == 2, true) << r.out;
  EXPECT_NE(r.out.find("profile: " + profile), std::string::npos) << r.out;
}

#endif  // REALIGN_WITH_TORCH

TEST(Cli, BadProfileNamesTheField) {
  const std::string bad = ::testing::TempDir() + "bad_profile.json";
  std::ofstream(bad) << R"({"version": 99, "device": "x"})";
  CliRun r = realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " profile=" + bad);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("version"), std::string::npos) << r.out;
  std::ofstream(bad) << R"({"version": )" << HardwareProfile::kVersion << R"(, "device": "x"})";
  r = realign("plan " + example("grpo_qwen2.5_7b_8xh100.yaml") + " profile=" + bad);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("peak_flops"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace realign
