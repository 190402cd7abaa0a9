#include "graph/call_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/config_file.h"
#include "graph/algorithms.h"

namespace realign {
namespace {

DataflowGraph ppo(int64_t staleness) {
  Json j = parse_yaml(R"(
algorithm: ppo
models: {actor: llama2-7b, critic: llama2-7b}
batch: {prompts: 64, prompt_len: 128, gen_len: 128}
)",
                      "test.yaml");
  ObjectReader root(j, "");
  AlgorithmConfig c = algorithm_config_from_json(root);
  c.staleness = staleness;
  return build_graph(c);
}

// "call@iteration" for each instance, for readable expectations.
std::vector<std::string> names(const DataflowGraph& g, const std::vector<CallInstance>& calls) {
  std::vector<std::string> out;
  for (const CallInstance& c : calls)
    out.push_back(g.mfcs[size_t(c.call)].name + "@" + std::to_string(c.iteration));
  return out;
}

TEST(CallSchedule, GenerationAndUntrainedInferenceRunAhead) {
  const DataflowGraph g = ppo(1);
  std::vector<std::string> ahead;
  for (int c = 0; c < int(g.mfcs.size()); ++c)
    if (runs_ahead(g, c)) ahead.push_back(g.mfcs[size_t(c)].name);
  EXPECT_EQ(ahead, (std::vector<std::string>{"actor_gen", "ref_inf", "reward_inf"}));
}

TEST(CallSchedule, SynchronousStepIsOneIterationInGraphOrder) {
  const DataflowGraph g = ppo(0);
  std::vector<CallInstance> want;
  for (int c = 0; c < int(g.mfcs.size()); ++c) want.push_back({c, 3});
  EXPECT_EQ(step_calls(g, 3, 10), want);
}

// The next iteration's generation comes first; its reference and reward inference after this iteration's
// training, which they do not feed (on devices they share, training then does not wait for them).
TEST(CallSchedule, StalenessOneGeneratesTheNextIterationBeforeTraining) {
  const DataflowGraph g = ppo(1);
  EXPECT_EQ(names(g, step_calls(g, 1, 3)),
            (std::vector<std::string>{"actor_gen@1", "ref_inf@1", "reward_inf@1", "actor_gen@2",
                                      "actor_inf@1", "critic_inf@1", "actor_train@1", "critic_train@1",
                                      "ref_inf@2", "reward_inf@2"}));
  EXPECT_EQ(names(g, step_calls(g, 2, 3)),
            (std::vector<std::string>{"actor_gen@3", "actor_inf@2", "critic_inf@2", "actor_train@2",
                                      "critic_train@2", "ref_inf@3", "reward_inf@3"}));
  // Nothing left to generate in the last step.
  EXPECT_EQ(names(g, step_calls(g, 3, 3)),
            (std::vector<std::string>{"actor_inf@3", "critic_inf@3", "actor_train@3", "critic_train@3"}));
}

TEST(CallSchedule, EveryIterationRunsEachCallOnceAndGenerationReadsVersionIMinusOneMinusN) {
  for (int64_t n : {0, 1, 2}) {
    const DataflowGraph g = ppo(n);
    const int64_t iterations = 6;
    std::map<std::pair<int, int64_t>, int64_t> step_of;
    for (int64_t s = 1; s <= iterations; ++s)
      for (const CallInstance& c : step_calls(g, s, iterations))
        EXPECT_TRUE(step_of.emplace(std::make_pair(c.call, c.iteration), s).second);
    EXPECT_EQ(step_of.size(), g.mfcs.size() * size_t(iterations));
    // Every call runs after the calls of its iteration that feed it: in an earlier step, or earlier in its.
    for (int64_t s = 1; s <= iterations; ++s) {
      const std::vector<CallInstance> calls = step_calls(g, s, iterations);
      for (size_t k = 0; k < calls.size(); ++k)
        for (int p : g.parents(calls[k].call)) {
          const CallInstance parent{p, calls[k].iteration};
          const auto at = std::find(calls.begin(), calls.end(), parent);
          const bool earlier_step = step_of[std::make_pair(p, parent.iteration)] < s;
          EXPECT_TRUE(earlier_step || at < calls.begin() + ptrdiff_t(k))
              << "N=" << n << " step " << s << ": " << g.mfcs[size_t(calls[k].call)].name
              << " before its input";
        }
    }
    const int gen = g.mfc_index("actor_gen");
    for (int64_t i = 1; i <= iterations; ++i) {
      // Step s starts with the weights of update s-1: generation of iteration i runs in step i-N (or step 1).
      const int64_t version = step_of[{gen, i}] - 1;
      EXPECT_EQ(version, std::max<int64_t>(0, i - 1 - n)) << "N=" << n << " i=" << i;
    }
  }
}

TEST(CallSchedule, IterationEdges) {
  for (int64_t n : {0, 1, 2}) {
    const DataflowGraph g = ppo(n);
    const int at = g.mfc_index("actor_train"), ct = g.mfc_index("critic_train");
    const std::vector<IterationEdge> want = {{at, g.mfc_index("actor_gen"), 1 + n},
                                             {at, g.mfc_index("actor_inf"), 1},
                                             {ct, g.mfc_index("critic_inf"), 1},
                                             {at, at, 1},
                                             {ct, ct, 1}};
    EXPECT_EQ(iteration_edges(g), want) << "N=" << n;
  }
}

TEST(CallSchedule, StalenessMovesTheBehaviourLogprobsToTheGeneration) {
  const DataflowGraph sync = ppo(0), async = ppo(1);
  EXPECT_EQ(sync.mfcs[size_t(sync.mfc_index("actor_inf"))].outputs, (std::vector<std::string>{"logprobs"}));
  EXPECT_EQ(async.mfcs[0].outputs, (std::vector<std::string>{"seq", "logprobs"}));
  EXPECT_EQ(async.mfcs[size_t(async.mfc_index("actor_inf"))].outputs,
            (std::vector<std::string>{"prox_logprobs"}));
}

}  // namespace
}  // namespace realign
