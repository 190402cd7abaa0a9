#include "train/train_config.h"

#include <gtest/gtest.h>

#include "core/config_file.h"

namespace realign::train {
namespace {

TrainingSections read(const std::string& yaml) {
  Json j = parse_yaml(yaml, "test.yaml");
  ObjectReader root(j, "");
  TrainingSections s = training_sections_from_json(root);
  root.finish();
  return s;
}

std::string error_of(const std::string& yaml) {
  try {
    read(yaml);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TrainConfig, DefaultsWork) {
  TrainingSections s = read("{}");
  EXPECT_GT(s.train.steps, 0);
  EXPECT_EQ(s.data.task, "addition");
  EXPECT_EQ(s.reward.kind, "verifier");
  EXPECT_EQ(s.train.critic_optim.lr, s.train.optim.lr);
}

TEST(TrainConfig, ReadsNestedSections) {
  TrainingSections s = read(R"(
train:
  steps: 7
  optim: {lr: 0.01, warmup_steps: 3, schedule: constant, zero1: true}
  ppo: {gamma: 0.99, kl_mode: loss, adaptive_kl: true, kl_estimator: k3}
  sampling: {temperature: 0.7, top_p: 0.9}
  sft_stage: {steps: 100, batch: 16}
data: {task: addition, max_digits: 3, chat_template: models/qwen}
reward: {kind: command, command: "python3 score.py"}
)");
  EXPECT_EQ(s.train.steps, 7);
  EXPECT_EQ(s.train.optim.schedule, "constant");
  EXPECT_TRUE(s.train.optim.zero1);
  EXPECT_FALSE(read("{}").train.optim.zero1);
  EXPECT_EQ(s.train.critic_optim.lr, 0.01);
  EXPECT_EQ(s.train.sft_stage.optim.lr, 0.01);  // stages inherit the main optimiser unless given
  EXPECT_EQ(s.train.sft_stage.steps, 100);
  EXPECT_EQ(s.train.ppo.kl_mode, "loss");
  EXPECT_TRUE(s.train.ppo.adaptive_kl);
  EXPECT_EQ(s.data.max_digits, 3);
  EXPECT_EQ(s.data.chat_template, "models/qwen");
  EXPECT_EQ(s.reward.command, "python3 score.py");
}

TEST(TrainConfig, ErrorsNameTheField) {
  EXPECT_NE(error_of("train: {stpes: 3}").find("stpes"), std::string::npos);
  EXPECT_NE(error_of("train: {ppo: {clip: 0.2}}").find("train.ppo"), std::string::npos);
  EXPECT_NE(error_of("train: {ppo: {kl_mode: both}}").find("train.ppo.kl_mode"), std::string::npos);
  EXPECT_NE(error_of("train: {ppo: {missing_stop_penalty: -1}}").find("train.ppo.missing_stop_penalty"),
            std::string::npos);
  EXPECT_NE(error_of("reward: {kind: command}").find("reward.command"), std::string::npos);
  EXPECT_NE(error_of("data: {task: sorting}").find("data.task"), std::string::npos);
  EXPECT_NE(error_of("train: {optim: {lr: -1}}").find("train.optim.lr"), std::string::npos);
  EXPECT_NE(error_of("train: {optim: {zero_1: true}}").find("zero_1"), std::string::npos);
  EXPECT_NE(error_of("train: {ppo: {behaviour_logprobs: sampled}}").find("train.ppo.behaviour_logprobs"),
            std::string::npos);
}

// The sampling's log-probs are the policy's only at temperature 1: taking the behaviour log-probs from them
// at another temperature would bias the PPO ratio, so it is refused naming both fields.
TEST(TrainConfig, BehaviourLogprobsFromGenerationNeedTemperatureOne) {
  EXPECT_EQ(read("train: {ppo: {behaviour_logprobs: generation}}").train.ppo.behaviour_logprobs,
            "generation");
  const std::string e =
      error_of("train: {ppo: {behaviour_logprobs: generation}, sampling: {temperature: 0.7}}");
  EXPECT_NE(e.find("train.ppo.behaviour_logprobs"), std::string::npos) << e;
  EXPECT_NE(e.find("train.sampling.temperature"), std::string::npos) << e;
  const std::string bad = error_of("train: {ppo: {behaviour_logprobs: sampled}}");
  EXPECT_NE(bad.find("train.ppo.behaviour_logprobs"), std::string::npos) << bad;
  EXPECT_NE(bad.find("recompute"), std::string::npos) << bad;  // names what is valid
}

// Without a reference model (models.ref: none) the KL coefficient is 0 by default, and a KL setting is an
// error naming it rather than a term silently dropped.
TEST(TrainConfig, NoReferenceModelMeansNoKlTerm) {
  auto without_reference = [](const std::string& yaml) {
    Json j = parse_yaml(yaml, "test.yaml");
    ObjectReader root(j, "");
    return training_sections_from_json(root, /*reference=*/false);
  };
  EXPECT_EQ(without_reference("{}").train.ppo.kl_coef, 0.0);
  EXPECT_EQ(without_reference("train: {ppo: {kl_coef: 0}}").train.ppo.kl_coef, 0.0);
  EXPECT_GT(read("{}").train.ppo.kl_coef, 0.0);
  for (const auto& [yaml, key] : {std::pair{"train: {ppo: {kl_coef: 0.01}}", "train.ppo.kl_coef"},
                                  std::pair{"train: {ppo: {adaptive_kl: true}}", "train.ppo.adaptive_kl"}}) {
    try {
      without_reference(yaml);
      ADD_FAILURE() << yaml << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.path(), key) << e.what();
    }
  }
}

}  // namespace
}  // namespace realign::train
