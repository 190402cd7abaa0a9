#include "graph/algorithms.h"

#include <gtest/gtest.h>

#include <map>

#include "core/config_file.h"

namespace realign {
namespace {

AlgorithmConfig parse(const std::string& yaml) {
  Json j = parse_yaml(yaml, "test.yaml");
  ObjectReader root(j, "");
  AlgorithmConfig c = algorithm_config_from_json(root);
  root.finish();
  return c;
}

const char* kPpo = R"(
algorithm: ppo
models: {actor: llama2-7b, critic: llama2-7b}
batch: {prompts: 512, prompt_len: 128, gen_len: 384, mini_batches: 4}
)";

TEST(Algorithms, PpoGraphShape) {
  const DataflowGraph g = build_graph(parse(kPpo));
  std::vector<std::string> names;
  for (const auto& m : g.mfcs) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"actor_gen", "ref_inf", "reward_inf", "actor_inf", "critic_inf",
                                             "actor_train", "critic_train"}));
  EXPECT_EQ(g.models.size(), 4u);
  EXPECT_TRUE(g.model(Role::kActor).trained);
  EXPECT_TRUE(g.model(Role::kCritic).trained);
  EXPECT_FALSE(g.model(Role::kRef).trained);
  EXPECT_EQ(g.model(Role::kCritic).head, HeadKind::kValue);
  const int train = g.mfc_index("actor_train");
  EXPECT_EQ(g.parents(train), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(g.parents(g.mfc_index("ref_inf")), (std::vector<int>{0}));
  EXPECT_EQ(g.parents(g.mfc_index("actor_inf")), (std::vector<int>{0}));
  EXPECT_EQ(g.mfcs[train].train_steps(), 4);
  EXPECT_EQ(g.mfcs[0].kind(), MfcKind::kGenerate);
  EXPECT_EQ(g.mfcs[0].n_seqs, 512);
  EXPECT_EQ(g.mfcs[0].seq_len(), 512);
}

// Each call names what it computes (its op, whose body the runtime runs); its kind, by which the planner
// prices it, follows from the op.
TEST(Algorithms, EveryCallNamesItsOp) {
  std::map<std::string, MfcOp> ppo;
  for (const Mfc& m : build_graph(parse(kPpo)).mfcs) ppo[m.name] = m.op;
  EXPECT_EQ(ppo, (std::map<std::string, MfcOp>{{"actor_gen", MfcOp::kSample},
                                               {"ref_inf", MfcOp::kTokenLogProbs},
                                               {"reward_inf", MfcOp::kSequenceScores},
                                               {"actor_inf", MfcOp::kTokenLogProbs},
                                               {"critic_inf", MfcOp::kTokenValues},
                                               {"actor_train", MfcOp::kPolicyUpdate},
                                               {"critic_train", MfcOp::kValueUpdate}}));
  const std::string pairs = "models: {actor: llama-tiny}\nbatch: {prompts: 8, prompt_len: 4}\n";
  const DataflowGraph dpo = build_graph(parse("algorithm: dpo\n" + pairs));
  ASSERT_EQ(dpo.mfcs.size(), 2u);
  EXPECT_EQ(dpo.mfcs[0].op, MfcOp::kPairLogProbs);
  EXPECT_EQ(dpo.mfcs[1].op, MfcOp::kDpoUpdate);
  EXPECT_TRUE(dpo.mfcs[1].pair_loss());
  const DataflowGraph sft =
      build_graph(parse("algorithm: sft\nmodels: {actor: llama-tiny}\nbatch: {prompts: 8, prompt_len: 4}\n"));
  ASSERT_EQ(sft.mfcs.size(), 1u);
  EXPECT_EQ(sft.mfcs[0].op, MfcOp::kSftUpdate);
  EXPECT_FALSE(sft.mfcs[0].pair_loss());
  const DataflowGraph rm =
      build_graph(parse("algorithm: rm\nmodels: {reward: llama-tiny}\nbatch: {prompts: 8, prompt_len: 4}\n"));
  ASSERT_EQ(rm.mfcs.size(), 1u);
  EXPECT_EQ(rm.mfcs[0].op, MfcOp::kPairScoreUpdate);
  EXPECT_EQ(rm.mfcs[0].kind(), MfcKind::kTrain);
  EXPECT_EQ(kind_of(MfcOp::kPairLogProbs), MfcKind::kInference);
}

TEST(Algorithms, NamesRoundTripAndStagesNameTheRlFamilyOnce) {
  for (Algorithm a : all_algorithms()) EXPECT_EQ(algorithm_from_string(to_string(a)), a);
  EXPECT_FALSE(algorithm_from_string("ppo2").has_value());
  EXPECT_EQ(stage_name(Algorithm::kGrpo), "rl");
  EXPECT_EQ(stage_name(Algorithm::kDpo), "dpo");
  EXPECT_TRUE(is_rl(Algorithm::kRemax));
  EXPECT_FALSE(is_rl(Algorithm::kSft));
}

TEST(Algorithms, GrpoSamplesGroupsWithoutCritic) {
  const DataflowGraph g = build_graph(parse(R"(
algorithm: grpo
models: {actor: qwen2.5-7b}
batch: {prompts: 64, prompt_len: 256, gen_len: 1024, samples_per_prompt: 8}
)"));
  EXPECT_EQ(g.mfcs.size(), 5u);  // gen, ref, reward, actor_inf, train
  EXPECT_EQ(g.mfcs[0].n_seqs, 512);
  EXPECT_EQ(g.mfc_index("critic_inf"), -1);
  EXPECT_EQ(g.model(Role::kRef).spec.name, "qwen2.5-7b");
}

TEST(Algorithms, RuleRewardsNeedNoRewardModelCall) {
  AlgorithmConfig c = parse(kPpo);
  c.reward_model = false;
  const DataflowGraph g = build_graph(c);
  EXPECT_EQ(g.mfc_index("reward_inf"), -1);
  EXPECT_EQ(g.models.size(), 3u);  // actor, critic, ref
  const auto& in = g.mfcs[size_t(g.mfc_index("actor_train"))].inputs;
  EXPECT_EQ(std::find(in.begin(), in.end(), "rewards"), in.end());
}

// ReaL's PPO takes the behaviour log-probs from the sampling: no actor_inf, the generation produces them and
// the actor's update reads them from it.
TEST(Algorithms, BehaviourLogprobsFromGenerationDropActorInference) {
  AlgorithmConfig c = parse(kPpo);
  c.recompute_logprobs = false;
  const DataflowGraph g = build_graph(c);
  validate_graph(g);
  EXPECT_EQ(g.mfc_index("actor_inf"), -1);
  EXPECT_EQ(g.mfcs.size(), 6u);
  EXPECT_EQ(g.mfcs[0].outputs, (std::vector<std::string>{"seq", "logprobs"}));
  const auto& in = g.mfcs[size_t(g.mfc_index("actor_train"))].inputs;
  EXPECT_NE(std::find(in.begin(), in.end(), "logprobs"), in.end());
  EXPECT_EQ(g.parents(g.mfc_index("actor_train")), (std::vector<int>{0, 1, 2, 3}));
}

TEST(Algorithms, RemaxAddsGreedyGeneration) {
  const DataflowGraph g = build_graph(parse(R"(
algorithm: remax
models: {actor: llama-tiny, reward: gpt2-tiny}
batch: {prompts: 8, prompt_len: 16, gen_len: 16}
)"));
  const int greedy = g.mfc_index("actor_greedy_gen");
  ASSERT_GE(greedy, 0);
  EXPECT_TRUE(g.mfcs[greedy].greedy);
  EXPECT_GE(g.mfc_index("reward_greedy_inf"), 0);
  const auto parents = g.parents(g.mfc_index("actor_train"));
  EXPECT_NE(std::find(parents.begin(), parents.end(), g.mfc_index("reward_greedy_inf")), parents.end());
}

TEST(Algorithms, DpoSftRm) {
  EXPECT_EQ(build_graph(parse("algorithm: dpo\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: "
                              "8, gen_len: 8}\n"))
                .mfcs.size(),
            2u);
  EXPECT_EQ(
      build_graph(parse("algorithm: sft\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8}\n"))
          .mfcs.size(),
      1u);
  const auto rm =
      build_graph(parse("algorithm: rm\nmodels: {reward: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8}\n"));
  EXPECT_TRUE(rm.model(Role::kReward).trained);
  EXPECT_EQ(rm.mfcs[0].n_seqs, 8);  // chosen and rejected
}

// Where a model lives between calls: its train call's layout, else its first call's (the simulator and the
// runtime both use home_call).
TEST(Algorithms, HomeCallIsTheTrainCallElseTheFirstCall) {
  const DataflowGraph g = build_graph(parse(kPpo));
  EXPECT_EQ(g.home_call(Role::kActor), g.mfc_index("actor_train"));  // not actor_gen, its first call
  EXPECT_EQ(g.home_call(Role::kCritic), g.mfc_index("critic_train"));
  EXPECT_EQ(g.home_call(Role::kRef), g.mfc_index("ref_inf"));
  EXPECT_EQ(g.home_call(Role::kReward), g.mfc_index("reward_inf"));
  const DataflowGraph remax = build_graph(parse(
      "algorithm: remax\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8, gen_len: 8}\n"));
  // ReMax scores sampled and greedy responses: the reward model's first call is the first of them.
  EXPECT_EQ(remax.home_call(Role::kReward), remax.mfc_index("reward_inf"));
  EXPECT_LT(remax.mfc_index("reward_inf"), remax.mfc_index("reward_greedy_inf"));
  EXPECT_EQ(remax.home_call(Role::kCritic), -1);  // ReMax has no critic
}

void expect_error_at(const std::string& yaml, const std::string& path) {
  try {
    parse(yaml);
    FAIL() << "expected an error at " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), path) << e.what();
  }
}

// veRL's actor_rollout_ref.model.override_config, as realign's config carries it: HF keys over the shape's.
TEST(Algorithms, AModelsOverrideConfigChangesItsShape) {
  const std::string batch = "batch: {prompts: 4, prompt_len: 2048, gen_len: 8192}\n";
  expect_error_at("algorithm: grpo\nmodels: {actor: qwen2.5-math-7b}\n" + batch, "batch");  // 4,096 positions
  const AlgorithmConfig c = parse(
      "algorithm: grpo\nmodels: {actor: {model: qwen2.5-math-7b, override_config: {max_position_embeddings: "
      "32768}}}\n" +
      batch);
  const ModelSpec& actor = c.models.at(Role::kActor);
  EXPECT_EQ(actor.max_positions, 32768);
  EXPECT_EQ(actor.name, "qwen2.5-math-7b");
  EXPECT_EQ(actor.total_params(), builtin_model("qwen2.5-math-7b").total_params());
  expect_error_at("algorithm: grpo\nmodels: {actor: {model: qwen2.5-math-7b, overrides: {}}}\n" + batch,
                  "models.actor.overrides");
  expect_error_at("algorithm: grpo\nmodels: {actor: {override_config: {}}}\n" + batch, "models.actor");
  try {
    parse(
        "algorithm: grpo\nmodels: {actor: {model: qwen2.5-math-7b, override_config: {num_attention_heads: "
        "5}}}\n" +
        batch);
    FAIL() << "5 heads over 4 KV heads was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.path().rfind("models.actor.override_config", 0), 0u) << e.path();
  }
}

TEST(Algorithms, BadConfigsNameTheField) {
  expect_error_at(
      "algorithm: ppx\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8, gen_len: 8}\n",
      "algorithm");
  expect_error_at(
      "algorithm: ppo\nmodels: {actor: llama-huge}\nbatch: {prompts: 4, prompt_len: 8, gen_len: 8}\n",
      "models.actor");
  expect_error_at(
      "algorithm: ppo\nmodels: {actor: llama-tiny, critc: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8, "
      "gen_len: 8}\n",
      "models.critc");
  expect_error_at(
      "algorithm: ppo\nmodels: {actor: llama-tiny}\nbatch: {prompts: 0, prompt_len: 8, gen_len: 8}\n",
      "batch.prompts");
  expect_error_at("algorithm: ppo\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8}\n",
                  "batch.gen_len");
  expect_error_at(
      "algorithm: grpo\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8, gen_len: 8, "
      "samples_per_prompt: 1}\n",
      "batch.samples_per_prompt");
  expect_error_at(
      "algorithm: ppo\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 8, gen_len: 8, "
      "mini_batch: 2}\n",
      "batch.mini_batch");
  expect_error_at(
      "algorithm: ppo\nmodels: {actor: llama-tiny}\nbatch: {prompts: 4, prompt_len: 400, gen_len: 400}\n",
      "batch");
  expect_error_at(
      "algorithm: ppo\nmodels: {actor: ./missing/config.json}\nbatch: {prompts: 4, prompt_len: 8, gen_len: "
      "8}\n",
      "./missing/config.json");
}

// `models.ref: none` (GRPO without a KL term, as DAPO runs it): no reference model, no ref_inf, and the
// update reads no reference log-probs. DPO's loss needs the reference: refused naming the key.
TEST(Algorithms, NoReferenceModelDropsTheReferenceCall) {
  const DataflowGraph g = build_graph(parse(R"(
algorithm: grpo
models: {actor: qwen2.5-7b, ref: none}
batch: {prompts: 64, prompt_len: 128, gen_len: 512, samples_per_prompt: 8}
)"));
  validate_graph(g);
  EXPECT_EQ(g.mfc_index("ref_inf"), -1);
  for (const auto& m : g.models) EXPECT_NE(m.role, Role::kRef);
  for (const auto& d : g.data) EXPECT_NE(d.name, "ref_logprobs");
  const auto& in = g.mfcs[size_t(g.mfc_index("actor_train"))].inputs;
  EXPECT_EQ(std::find(in.begin(), in.end(), "ref_logprobs"), in.end());
  EXPECT_EQ(g.mfcs.size(), 4u);  // actor_gen, reward_inf, actor_inf, actor_train
  EXPECT_TRUE(build_graph(parse(kPpo)).mfc_index("ref_inf") >= 0);
  expect_error_at(
      "algorithm: dpo\nmodels: {actor: llama-tiny, ref: none}\nbatch: {prompts: 4, prompt_len: 8, gen_len: "
      "8}\n",
      "models.ref");
}

}  // namespace
}  // namespace realign
