// A Hydra launch's recipe config read as Hydra composes it: found from the program's directory, its
// defaults list in order with its own keys where `_self_` stands, the engine's own configs taken as the
// base, the command line over all; what is not read is noted and a missing default named.
#include "engines/hydra_config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "testing/temp_dir.h"

namespace realign {
namespace {

using engines::HydraLaunch;
using testing::write_file;

const std::vector<std::string> kEngineConfigs = {"ppo_trainer", "ppo_megatron_trainer"};

const Json* value_of(const HydraLaunch& l, const std::string& key) {
  for (const auto& e : l.entries)
    if (e.key == key) return &e.value;
  return nullptr;
}

class HydraConfig : public ::testing::Test {
 protected:
  // A recipe laid out as veRL's are: recipe/my_algo/{main.py, config/*.yaml}, launched from the repository's
  // root, where the script also lives.
  void SetUp() override {
    std::filesystem::create_directories(dir.file("recipe/my_algo/config"));
    write_file(dir.file("recipe/my_algo/config/my_trainer.yaml"), R"(hydra:
  searchpath:
    - pkg://verl.trainer.config
defaults:
  - ppo_megatron_trainer
  - rollout_defaults
  - _self_
data:
  train_batch_size: 512
  gen_batch_size: ${data.train_batch_size}
actor_rollout_ref:
  rollout:
    n: 8
)");
    write_file(dir.file("recipe/my_algo/config/rollout_defaults.yaml"), R"(actor_rollout_ref:
  rollout:
    n: 2
    tensor_model_parallel_size: 4
)");
  }
  HydraLaunch read(const std::string& line) {
    return engines::read_hydra_launch(line, dir.file("run.sh"), {}, kEngineConfigs);
  }
  testing::TempDir dir;
};

TEST_F(HydraConfig, RecipeFoundFromTheModuleIsComposedUnderTheCommandLine) {
  const HydraLaunch l = read(
      "python3 -m recipe.my_algo.main --config-path=config --config-name='my_trainer.yaml' "
      "data.train_batch_size=256 trainer.nnodes=2\n");
  EXPECT_EQ(l.config_name, "my_trainer");
  EXPECT_EQ(l.config_file, dir.file("recipe/my_algo/config/my_trainer.yaml"));
  EXPECT_EQ(l.base, "ppo_megatron_trainer");
  EXPECT_TRUE(l.notes.empty());
  // The recipe's own keys over its defaults (self last), the command line over both, interpolations after.
  EXPECT_EQ(*value_of(l, "actor_rollout_ref.rollout.n"), 8);
  EXPECT_EQ(*value_of(l, "actor_rollout_ref.rollout.tensor_model_parallel_size"), 4);
  EXPECT_EQ(*value_of(l, "data.train_batch_size"), 256);
  EXPECT_EQ(*value_of(l, "data.gen_batch_size"), 256);
  EXPECT_EQ(*value_of(l, "trainer.nnodes"), 2);
  EXPECT_EQ(value_of(l, "hydra.searchpath"), nullptr);
}

TEST_F(HydraConfig, APathFromTheWorkingDirectoryIsReadAsWritten) {
  const std::filesystem::path was = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const HydraLaunch l = read(
      "python3 -m somewhere.else --config-path=\"$(pwd)/recipe/my_algo/config\" --config-name=my_trainer\n");
  std::filesystem::current_path(was);
  // $(pwd) is the working directory, as bash gives it.
  EXPECT_EQ(l.config_file,
            (std::filesystem::path(dir.path()) / "recipe/my_algo/config/my_trainer.yaml").string());
  EXPECT_EQ(*value_of(l, "actor_rollout_ref.rollout.n"), 8);
}

TEST_F(HydraConfig, SelfFirstLetsTheDefaultsWinAndAGroupChoiceIsNoted) {
  write_file(dir.file("recipe/my_algo/config/self_first.yaml"), R"(defaults:
  - _self_
  - rollout_defaults
  - actor@actor_rollout_ref.actor: megatron_actor
  - override hydra/job_logging: disabled
actor_rollout_ref:
  rollout:
    n: 8
)");
  // No --config-path: "config" beside the program, as veRL's programs declare.
  const HydraLaunch l = read("python3 recipe/my_algo/main.py -cn self_first\n");
  EXPECT_EQ(l.base, "ppo_trainer");  // no engine config named: veRL's default
  EXPECT_EQ(*value_of(l, "actor_rollout_ref.rollout.n"), 2);
  ASSERT_EQ(l.notes.size(), 1u);  // Hydra's own logging group is not the run's
  EXPECT_EQ(l.notes[0].rfind("defaults: {\"actor@actor_rollout_ref.actor\":\"megatron_actor\"}", 0), 0u)
      << l.notes[0];
}

TEST_F(HydraConfig, EngineConfigsAreNotReadAndAMissingRecipeIsNoted) {
  const HydraLaunch own = read("python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer a.b=1\n");
  EXPECT_EQ(own.base, "ppo_megatron_trainer");
  EXPECT_EQ(own.config_file, "");
  EXPECT_TRUE(own.notes.empty());
  EXPECT_EQ(own.entries.size(), 3u);  // the line's own: -m, --config-name, a.b
  const HydraLaunch plain = read("python3 -m verl.trainer.main_ppo a.b=1\n");
  EXPECT_EQ(plain.config_name, "ppo_trainer");
  const HydraLaunch missing =
      read("python3 -m recipe.other.main --config-path=config --config-name=x a.b=1\n");
  EXPECT_EQ(missing.base, "ppo_trainer");
  ASSERT_EQ(missing.notes.size(), 1u);
  EXPECT_EQ(missing.notes[0].rfind("--config-name: 'x' is not found", 0), 0u) << missing.notes[0];
}

TEST_F(HydraConfig, ADefaultNotFoundOrARecipeNotAMappingIsNamed) {
  // The recipe `name` holding `yaml` is refused, the error naming its file and saying `what`.
  auto expect_refused = [&](const std::string& name, const std::string& yaml, const std::string& what) {
    const std::string file = dir.file("recipe/my_algo/config/" + name + ".yaml");
    write_file(file, yaml);
    try {
      read("python3 -m recipe.my_algo.main --config-name=" + name + "\n");
      ADD_FAILURE() << name << " read without complaint";
    } catch (const Error& e) {
      EXPECT_EQ(e.path(), file);
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_refused("broken", "defaults:\n  - nowhere\n  - _self_\n", "'nowhere'");
  expect_refused("listed", "- a\n- b\n", "mapping");
}

}  // namespace
}  // namespace realign
