#include "apps/run_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/config_file.h"

namespace realign::apps {
namespace {

const char* kBase = R"(algorithm: ppo
models: {actor: llama-tiny}
batch: {prompts: 16, prompt_len: 32, gen_len: 32}
cluster: {nodes: 1, devices_per_node: 4, device: cpu-gloo}
)";

std::string error_path(const std::string& extra, const std::vector<std::string>& overrides = {}) {
  Json j = parse_yaml(std::string(kBase) + extra, "run.yaml");
  apply_overrides(j, overrides);
  try {
    run_config_from_json(j);
  } catch (const Error& e) {
    return e.path();
  }
  return "<no error>";
}

TEST(RunConfig, ReadsEverySection) {
  Json j = parse_yaml(std::string(kBase) + "plan: {mode: co-located, seed: 4}\n", "run.yaml");
  const RunConfig c = run_config_from_json(j);
  // The default reward is the task's verifier: no reward model call; actor_inf recomputes the log-probs.
  EXPECT_EQ(c.graph.mfcs.size(), 6u);
  EXPECT_EQ(c.graph.mfc_index("reward_inf"), -1);
  EXPECT_GE(c.graph.mfc_index("actor_inf"), 0);
  Json with_model = parse_yaml(std::string(kBase) + "reward: {kind: model}\n", "run.yaml");
  EXPECT_GE(run_config_from_json(with_model).graph.mfc_index("reward_inf"), 0);
  EXPECT_EQ(c.cluster.n_devices(), 4);
  EXPECT_EQ(c.plan.mode, "co-located");
  EXPECT_EQ(c.plan.search.seed, 4u);
}

// Every file in profiles/ loads through the config's `profile` key (run_profile) as the profile realign
// prices its device with when no file is named: the same coefficients, so the same estimates. Every file is
// one the binary embeds.
TEST(RunConfig, EveryShippedProfileLoadsThroughTheProfileKey) {
  std::vector<std::string> files, shipped = shipped_profile_names();
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(REALIGN_SOURCE_DIR) + "/profiles")) {
    const std::string name = entry.path().stem().string();
    files.push_back(name);
    Json j = parse_yaml(kBase, "run.yaml");
    apply_overrides(j, {"profile=" + entry.path().string()});
    HardwareProfile loaded;
    ASSERT_NO_THROW(loaded = run_profile(run_config_from_json(j))) << entry.path();
    EXPECT_EQ(loaded, builtin_profile(builtin_device(name, "device"))) << entry.path();
  }
  std::sort(files.begin(), files.end());
  std::sort(shipped.begin(), shipped.end());
  EXPECT_EQ(files, shipped);
}

// A command that runs the plan on this machine (train, validate) carries a CPU profile that records its
// probe time to this machine, and says so; plan and simulate (no probe) and a GPU cluster are not scaled.
TEST(RunConfig, ACpuProfileIsCarriedToThisMachineByItsHostProbe) {
  HardwareProfile fitted = builtin_profile(builtin_device("cpu-gloo", "device"));
  fitted.host_probe_s = {0.002, "measured on the fitting machine (test)"};
  const std::string file = testing::TempDir() + "/probed_profile.json";
  write_text_file(file, to_json(fitted).dump(2));
  Json j = parse_yaml(kBase, "run.yaml");
  apply_overrides(j, {"profile=" + file});
  RunConfig config = run_config_from_json(j);
  EXPECT_EQ(run_profile(config), fitted);
  EXPECT_EQ(profile_name(config), file);
  config.host_probe_s = 0.003;
  EXPECT_DOUBLE_EQ(run_profile(config).gemm_efficiency.value, fitted.gemm_efficiency.value / 1.5);
  EXPECT_EQ(profile_name(config),
            file + ", carried to this machine: times x1.50 (its host probe 3.00 ms, 2.00 ms where fitted)");
  apply_overrides(j, {"cluster.device=h100-sxm"});
  config = run_config_from_json(j);
  config.host_probe_s = 0.003;
  EXPECT_DOUBLE_EQ(run_profile(config).gemm_efficiency.value, fitted.gemm_efficiency.value);
}

TEST(RunConfig, UnknownKeysAndBadValuesNameTheField) {
  EXPECT_EQ(error_path("planner: {mode: search}\n"), "planner");
  EXPECT_EQ(error_path("plan: {mode: fast}\n"), "plan.mode");
  EXPECT_EQ(error_path("plan: {seeds: 3}\n"), "plan.seeds");
  EXPECT_EQ(error_path("plan: {mode: file}\n"), "plan.file");
  EXPECT_EQ(error_path("plan: {time_budget_s: -1}\n"), "plan.time_budget_s");
  EXPECT_EQ(error_path("plan: {disjoint: [actor_gen]}\n"), "plan.disjoint[0]");
  EXPECT_EQ(error_path("", {"cluster.devices_per_node=0"}), "cluster.devices_per_node");
  EXPECT_EQ(error_path("", {"cluster.gpus=8"}), "cluster.gpus");
  EXPECT_EQ(error_path("", {"batch.prompts=x"}), "batch.prompts");
  // A reward model named but not used would be planned for nothing.
  EXPECT_EQ(error_path("", {"models.reward=llama-tiny"}), "reward.kind");
}

// A negative seed is refused naming plan.seed (it was taken as 2^64 - 1); 0 and the largest int64 are seeds.
TEST(RunConfig, NegativeSeedIsRefusedNamingTheField) {
  EXPECT_EQ(error_path("", {"plan.seed=-1"}), "plan.seed");
  EXPECT_EQ(error_path("", {"plan.seed=0"}), "<no error>");
  Json j = parse_yaml(kBase, "run.yaml");
  apply_overrides(j, {"plan.seed=9223372036854775807"});
  EXPECT_EQ(run_config_from_json(j).plan.search.seed, 9223372036854775807u);
}

// Staleness is an edge of the graphs that generate: negative, without generation (DPO, SFT, reward-model
// training) or at a temperature where the sampling's log-probs are not the policy's, it is refused naming
// train.staleness.
TEST(RunConfig, StalenessIsRefusedWhereItCannotApply) {
  EXPECT_EQ(error_path("", {"train.staleness=-1"}), "train.staleness");
  EXPECT_EQ(error_path("", {"algorithm=dpo", "train.staleness=1"}), "train.staleness");
  EXPECT_EQ(error_path("", {"algorithm=sft", "train.staleness=2"}), "train.staleness");
  EXPECT_EQ(error_path("", {"train.staleness=1", "train.sampling.temperature=0.7"}), "train.staleness");
  EXPECT_EQ(error_path("", {"algorithm=dpo", "train.staleness=0"}), "<no error>");
  Json j = parse_yaml(std::string(kBase) + "train: {staleness: 2}\n", "run.yaml");
  const RunConfig c = run_config_from_json(j);
  EXPECT_EQ(c.graph.staleness, 2);
  EXPECT_GE(c.graph.mfc_index("actor_inf"), 0);  // the proximal policy's log-probs
}

// A share of a batch generated ahead (fractional staleness) interrupts the rest for newer weights: only with
// partial rollouts, in (0, 1].
TEST(RunConfig, AStalenessShareNeedsPartialRolloutsAndIsAFraction) {
  const std::vector<std::string> streaming = {"cluster.device=h100-sxm", "train.staleness=1",
                                              "train.partial_rollout=true"};
  auto with = [&](std::vector<std::string> o, const std::string& extra) {
    o.push_back(extra);
    return o;
  };
  EXPECT_EQ(error_path("", with(streaming, "train.staleness_share=0")), "train.staleness_share");
  EXPECT_EQ(error_path("", with(streaming, "train.staleness_share=1.5")), "train.staleness_share");
  EXPECT_EQ(error_path("", {"train.staleness=1", "train.staleness_share=0.5"}), "train.staleness_share");
  Json j = parse_yaml(kBase, "run.yaml");
  apply_overrides(j, with(streaming, "train.staleness_share=0.3"));
  const RunConfig c = run_config_from_json(j);
  EXPECT_EQ(c.graph.staleness, 1);
  EXPECT_EQ(c.graph.staleness_share, 0.3);
}

}  // namespace
}  // namespace realign::apps
