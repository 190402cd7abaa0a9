#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>

#include "data/addition_task.h"
#include "data/datasets.h"
#include "data/epoch_sampler.h"
#include "data/jsonl.h"
#include "data/reward_command.h"

namespace realign::data {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Jsonl, BadLineNamesFileAndLine) {
  const std::string path = write_temp("bad.jsonl", "{\"prompt\": \"a\"}\n\n{\"prompt\": \"b\"\n");
  try {
    read_jsonl(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), path + ":3");
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
}

TEST(Datasets, FieldsAreChecked) {
  EXPECT_EQ(load_prompts(write_temp("p.jsonl", "{\"prompt\": \"1+1=\", \"answer\": \"2\"}\n"))[0].answer,
            "2");
  try {
    load_sft_pairs(write_temp(
        "s.jsonl", "{\"prompt\": \"x\", \"response\": \"y\"}\n{\"prompt\": \"x\", \"reply\": \"y\"}\n"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("s.jsonl:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_preference_pairs(write_temp("e.jsonl", "\n")), Error);
  EXPECT_THROW(load_preference_pairs(
                   write_temp("n.jsonl", "{\"prompt\": 3, \"chosen\": \"a\", \"rejected\": \"b\"}\n")),
               Error);
}

// A ChatML-like stand-in for a model's chat template (the real renderer is io's and tested there).
std::string chatml(const Json& messages, bool add_generation_prompt, const std::string& where) {
  std::string out;
  for (const Json& m : messages) {
    if (!m.contains("role")) throw Error(where + ": messages", "a turn without a role");
    out += "<" + m["role"].get<std::string>() + ">" + m["content"].get<std::string>() + "</>";
  }
  return add_generation_prompt ? out + "<assistant>" : out;
}

TEST(Datasets, ConversationsAreRenderedWithTheChatTemplate) {
  const auto prompts = load_prompts(
      write_temp(
          "cp.jsonl",
          R"({"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}], "answer": "4"})"),
      chatml);
  EXPECT_EQ(prompts[0].prompt, "<system>S</><user>Q</><assistant>");
  EXPECT_EQ(prompts[0].answer, "4");
  const auto sft = load_sft_pairs(
      write_temp(
          "cs.jsonl",
          R"({"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}]})"),
      chatml);
  EXPECT_EQ(sft[0].prompt, "<user>Q</><assistant>");
  EXPECT_EQ(sft[0].response, "A</>");
  const auto prefs = load_preference_pairs(
      write_temp("cr.jsonl",
                 R"({"messages": [{"role": "user", "content": "Q"}], "chosen": "good", "rejected": "bad"})"),
      chatml);
  EXPECT_EQ(prefs[0].prompt, "<user>Q</><assistant>");
  EXPECT_EQ(prefs[0].chosen, "good</>");
  EXPECT_EQ(prefs[0].rejected, "bad</>");
  // Plain records still load beside conversations.
  EXPECT_EQ(load_prompts(write_temp("mix.jsonl", R"({"prompt": "p"})"), chatml)[0].prompt, "p");
}

TEST(Datasets, ConversationErrorsNameFileLineAndField) {
  auto error_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string no_role =
      write_temp("nr.jsonl", "{\"prompt\": \"p\"}\n{\"messages\": [{\"content\": \"Q\"}]}\n");
  std::string e = error_of([&] { load_prompts(no_role, chatml); });
  EXPECT_NE(e.find("nr.jsonl:2: messages"), std::string::npos) << e;
  // Without a chat template, conversations are refused with what to do.
  e = error_of(
      [&] { load_prompts(write_temp("nt.jsonl", R"({"messages": [{"role": "user", "content": "Q"}]})")); });
  EXPECT_NE(e.find("nt.jsonl:1: messages"), std::string::npos) << e;
  EXPECT_NE(e.find("chat template"), std::string::npos) << e;
  // An SFT conversation must end with the assistant's response.
  e = error_of([&] {
    load_sft_pairs(write_temp("ns.jsonl", R"({"messages": [{"role": "user", "content": "Q"}]})"), chatml);
  });
  EXPECT_NE(e.find("ns.jsonl:1: messages"), std::string::npos) << e;
  EXPECT_NE(e.find("assistant"), std::string::npos) << e;
  // A template that does not render prompt + answer as a prefix cannot be cut into prompt and response.
  auto odd = [](const Json& m, bool gen, const std::string&) {
    return gen ? std::string("X") : "Y" + m.dump();
  };
  e = error_of([&] {
    load_preference_pairs(
        write_temp("np.jsonl",
                   R"({"messages": [{"role": "user", "content": "Q"}], "chosen": "a", "rejected": "b"})"),
        odd);
  });
  EXPECT_NE(e.find("np.jsonl:1: messages"), std::string::npos) << e;
}

TEST(EpochSampler, CoversEachEpochOnceAndResumesExactly) {
  EpochSampler s(10, 42);
  const auto first = s.next(10);
  EXPECT_EQ(std::set<int64_t>(first.begin(), first.end()).size(), 10u);
  auto a = s.next(10);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 10u);
  EpochSampler fresh(10, 42);
  fresh.next(7);
  const SamplerState saved = fresh.state();
  const auto expected = fresh.next(25);
  EpochSampler resumed(10, 42);
  resumed.restore(saved);
  EXPECT_EQ(resumed.next(25), expected);
  EpochSampler other(10, 43);
  EXPECT_NE(other.next(10), EpochSampler(10, 42).next(10));
}

TEST(AdditionTask, PromptsAnswersAndRewards) {
  AdditionTask t{2, 3, 5};
  const auto ps = t.prompts(200);
  for (const auto& p : ps) {
    const auto plus = p.prompt.find('+');
    const long a = std::stol(p.prompt.substr(0, plus)), b = std::stol(p.prompt.substr(plus + 1));
    EXPECT_EQ(std::to_string(a + b), p.answer);
    EXPECT_EQ(p.prompt.back(), '=');
  }
  EXPECT_EQ(t.prompts(5, 0)[0].prompt, t.prompts(5, 0)[0].prompt);
  EXPECT_NE(t.prompts(5, 0)[0].prompt + t.prompts(5, 0)[1].prompt,
            t.prompts(5, 1)[0].prompt + t.prompts(5, 1)[1].prompt);
  EXPECT_EQ(addition_reward("122\nextra", "122", false), 1.0);
  EXPECT_EQ(addition_reward(" 122 \n", "122", false), 1.0);
  EXPECT_EQ(addition_reward("123\n", "122", false), 0.0);
  EXPECT_NEAR(addition_reward("123\n", "122", true), 0.5 * 2.0 / 3.0, 1e-12);
  EXPECT_EQ(addition_reward("12a\n", "122", true), 0.0);
  int far = 0, broken = 0;
  for (const auto& pair : t.preference_pairs(400)) {
    EXPECT_NE(pair.chosen, pair.rejected);
    EXPECT_EQ(addition_reward(pair.rejected, first_line(pair.chosen), false), 0.0);
    EXPECT_EQ(pair.rejected.back(), '\n');
    // Near misses change one digit or add/subtract at most 9, keeping the length; a far miss does neither, a
    // broken answer has a digit more or less (maybe none).
    if (pair.rejected.size() != pair.chosen.size()) {
      ++broken;
      continue;
    }
    size_t digits_changed = 0;
    for (size_t i = 0; i < pair.rejected.size(); ++i) digits_changed += pair.rejected[i] != pair.chosen[i];
    far += digits_changed > 1 && std::abs(std::stol(pair.rejected) - std::stol(pair.chosen)) > 9;
  }
  EXPECT_GT(broken,
            60);  // not only near misses: about a quarter broken, a quarter far (many of another length)
  EXPECT_GT(far, 20);
}

TEST(RewardCommand, ReadsOneScorePerSample) {
  const std::vector<RewardSample> samples = {{"1+1=", "2", "2"}, {"2+2=", "5", "4"}};
  // A real verifier in a few lines of shell: score 1 when "response" equals "answer".
  const auto scores = run_reward_command(
      "while read -r line; do r=$(echo \"$line\" | sed 's/.*\"response\":\"\\([^\"]*\\)\".*/\\1/');"
      " a=$(echo \"$line\" | sed 's/.*\"answer\":\"\\([^\"]*\\)\".*/\\1/');"
      " if [ \"$r\" = \"$a\" ]; then echo 1; else echo 0; fi; done",
      samples);
  EXPECT_EQ(scores, (std::vector<double>{1.0, 0.0}));
}

TEST(RewardCommand, FailuresAreClearErrors) {
  const std::vector<RewardSample> samples = {{"p", "r", ""}, {"p", "r", ""}};
  auto message = [&](const std::string& cmd, double timeout = 30) {
    try {
      run_reward_command(cmd, samples, timeout);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("exit 3").find("exited with code 3"), std::string::npos);
  EXPECT_NE(message("echo 1; echo banana").find("not a number"), std::string::npos);
  EXPECT_NE(message("echo 1").find("1 scores for 2 samples"), std::string::npos);
  EXPECT_NE(message("kill -9 $$").find("signal 9"), std::string::npos);
  EXPECT_NE(message("sleep 5", 0.3).find("did not finish"), std::string::npos);
}

}  // namespace
}  // namespace realign::data
