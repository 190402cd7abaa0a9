// Every key and flag `realign plan --engine NAME[@TAG]` writes, in its --json config and in the files --out
// writes, exists in that release's config tree or argument parser (tests/engines/releases/, made by
// scripts/release_keys.py from the release's tag), for the PPO, GRPO and mixture-of-experts examples and
// every release realign writes for.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "apps/engine_report.h"
#include "apps/run_config.h"
#include "core/config_file.h"
#include "core/error.h"
#include "engines/engine.h"
#include "testing/temp_dir.h"

namespace realign {
namespace {

// One release's accepted keys (`switch`: an OpenRLHF store_true flag, which takes no value).
struct ReleaseKeys {
  std::set<std::string> keys, switches;
  std::string commit;
};

ReleaseKeys release_keys(const std::string& engine_at_tag, const std::string& config) {
  const std::string path =
      std::string(REALIGN_SOURCE_DIR) + "/tests/engines/releases/" + engine_at_tag + "/" + config + ".keys";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "no release data " << path;
  ReleaseKeys r;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# commit: ", 0) == 0) r.commit = line.substr(10);
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key, mark;
    words >> key >> mark;
    r.keys.insert(key);
    if (mark == "switch") r.switches.insert(key);
  }
  return r;
}

// The shipped examples, as the engine can run their workload: AReaL and NeMo-RL score with functions, so a
// reward model is replaced by a verifier.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"ppo", "examples/ppo_llama2_7b_16xh100.yaml"},
    {"grpo", "examples/grpo_qwen2.5_7b_8xh100.yaml"},
    {"moe", "examples/grpo_qwen3_30b_a3b_32xh100.yaml"},
};

apps::RunConfig example_config(const std::string& engine, const std::string& file, const testing::TempDir& dir) {
  Json j = parse_yaml(testing::read_file(std::string(REALIGN_SOURCE_DIR) + "/" + file), file);
  if ((engine == "areal" || engine == "nemo-rl") && j["reward"].value("kind", "") == "model") {
    j["reward"] = {{"kind", "verifier"}};
    if (j.contains("models")) j["models"].erase("reward");
  }
  j["plan"]["time_budget_s"] = 1;  // the keys written do not depend on how long the search ran
  const std::string path = dir.file("config.json");
  testing::write_file(path, j.dump());
  return apps::load_run_config(path, {});
}

// The launch file's arguments (one a line after the command, as launch_script writes them) or, for AReaL's
// config.yaml, its dotted leaves; `config` receives the config the launch names.
std::vector<std::string> written_keys(const std::string& engine, const std::string& text, std::string& config,
                                      const ReleaseKeys* flags) {
  std::vector<std::string> keys;
  if (engine == "areal") {
    std::function<void(const Json&, const std::string&)> walk = [&](const Json& j, const std::string& at) {
      for (const auto& [k, v] : j.items()) {
        if (v.is_object())
          walk(v, at + k + ".");
        else
          keys.push_back(at + k);
      }
    };
    walk(parse_yaml(text, "config.yaml"), "");
    return keys;
  }
  std::istringstream in(text);
  bool arguments = false;
  for (std::string line; std::getline(in, line);) {
    if (!arguments) {
      arguments = line.size() > 2 && line.substr(line.size() - 2) == " \\" && line[0] != '#';
      continue;
    }
    if (line.rfind("  ", 0) != 0) break;
    std::string arg = line.substr(2);
    if (arg.size() > 2 && arg.substr(arg.size() - 2) == " \\") arg.resize(arg.size() - 2);
    if (arg.rfind("--config-name=", 0) == 0) config = arg.substr(14, arg.find(".yaml") - 14);
    if (arg.rfind("--config examples/configs/", 0) == 0) config = arg.substr(26, arg.find(".yaml") - 26);
    if (arg.rfind("--config", 0) == 0) continue;  // Hydra's and NeMo-RL's own, naming the config
    if (engine == "openrlhf") {
      const size_t space = arg.find(' ');
      const std::string flag = arg.substr(0, space);
      // A store_true flag takes no value; any other flag needs one.
      if (flags && flags->keys.count(flag)) {
        EXPECT_EQ(flags->switches.count(flag) > 0, space == std::string::npos) << arg;
      }
      keys.push_back(flag);
    } else {
      keys.push_back(arg.substr(0, arg.find('=')));
    }
  }
  return keys;
}

void expect_release_keys(const std::string& engine_name, const std::string& example, const std::string& file) {
  SCOPED_TRACE(engine_name + " on " + example);
  const testing::TempDir dir;
  const auto engine = engines::make_engine(engine_name);
  const std::string engine_at_tag = engine->name() + "@" + engine->release().tag;
  const apps::RunConfig config = example_config(engine->name(), file, dir);
  if (engine->name() == "nemo-rl" && example == "ppo") {
    try {
      apps::make_engine_report(config, engine_name);
      ADD_FAILURE() << "NeMo-RL ran PPO";
    } catch (const Error& e) {
      EXPECT_EQ(e.path(), "algorithm");  // realign writes GRPO for NeMo-RL; refused naming the field
    }
    return;
  }
  const apps::EngineReport report = apps::make_engine_report(config, engine_name);
  ASSERT_TRUE(report.search.plan && report.fits) << report.problem;
  const Json json = apps::engine_report_json(report);
  EXPECT_EQ(json["release"]["tag"], engine->release().tag);
  EXPECT_EQ(json["release"]["commit"], engine->release().commit);

  // --out: the launch file names the config (or parser) its keys are read by.
  const auto paths = apps::write_engine_files(report, dir.file("out"));
  const std::string launch = testing::read_file(paths.at(0));
  EXPECT_NE(launch.find(engine->release().tag), std::string::npos) << "the launch names its release";
  std::string config_name = engine->name() == "openrlhf" ? "train_ppo_ray"
                            : engine->name() == "areal"  ? (example == "ppo" ? "PPOConfig" : "GRPOConfig")
                                                         : "";
  std::string named;
  const ReleaseKeys flags = engine->name() == "openrlhf" ? release_keys(engine_at_tag, config_name) : ReleaseKeys{};
  const auto from_file = written_keys(engine->name(), launch, named, &flags);
  if (config_name.empty()) config_name = named;
  ASSERT_FALSE(config_name.empty()) << launch;
  const ReleaseKeys accepted = release_keys(engine_at_tag, config_name);
  EXPECT_EQ(accepted.commit, engine->release().commit) << "the data is of the release the writer targets";
  ASSERT_FALSE(from_file.empty());
  for (const auto& key : from_file)
    EXPECT_TRUE(accepted.keys.count(key)) << engine_at_tag << " " << config_name << " has no " << key;
  // --json: the same config.
  for (const auto& [key, value] : json["engine_config"].items())
    EXPECT_TRUE(accepted.keys.count(key)) << engine_at_tag << " " << config_name << " has no " << key;
}

TEST(ReleaseKeys, EveryWrittenKeyIsInItsReleasesConfigOrParser) {
  for (const auto& engine : engines::engine_names())
    for (const auto& release : engines::releases(engine))
      for (const auto& [example, file] : kExamples) expect_release_keys(engine + "@" + release.tag, example, file);
}

TEST(ReleaseKeys, NoTagIsTheCurrentRelease) {
  for (const auto& engine : engines::engine_names())
    EXPECT_EQ(engines::make_engine(engine)->release().tag, engines::releases(engine).front().tag) << engine;
}

TEST(ReleaseKeys, AnUnknownReleaseNamesTheValidOnes) {
  try {
    engines::make_engine("verl@v0.3.0");
    FAIL() << "an unknown release was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "--engine");
    const std::string what = e.what();
    EXPECT_NE(what.find("'v0.3.0'"), std::string::npos) << what;
    EXPECT_NE(what.find("verl@v0.9.0 (current), verl@v0.7.0"), std::string::npos) << what;
  }
  EXPECT_EQ(engines::make_engine("openrlhf@0.10.1.post2")->release().tag, "v0.10.1.post2");
}

// A current OpenRLHF script is read in its dotted flags, and a refusal names the flag as that release spells
// it, not the reader's flat name.
TEST(ReleaseKeys, OpenRlhfDottedScriptIsRefusedInItsOwnFlags) {
  const auto openrlhf = engines::make_engine("openrlhf");
  try {
    openrlhf->read_run(
        "python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path Qwen/Qwen2.5-7B "
        "--rollout.batch_size 8 --algo.advantage.estimator group_norm --rollout.n_samples_per_prompt 4\n",
        "train.sh", {});
    FAIL() << "read without vLLM engines";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "--vllm.num_engines") << e.what();
  }
  try {
    openrlhf->read_run("python3 -m openrlhf.cli.train_ppo_ray --actor_num_nodes 1 --pretrain x\n", "train.sh",
                       {});
    FAIL() << "read without vLLM engines";
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "--vllm_num_engines") << e.what();  // a flat script keeps its flat words
  }
}

}  // namespace
}  // namespace realign
