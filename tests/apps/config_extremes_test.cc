// Every numeric config field at its extremes (0, -1, 1, 2^31, 2^32, the largest int64, 1e300, ...) goes
// through what `realign plan` runs (run_config_from_json, then make_plan_report with the staleness comparison)
// and ends either as a plan or as a realign::Error naming the field: never an internal CHECK's abort, another
// exception or a run past its time. Each case runs in a forked child, so an abort is seen as a signal, not the
// end of the test binary. Fields `realign plan` reads only in the config (train.optim.*, train.ppo.*, data.*,
// reward.*) are read but not planned.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/plan_report.h"
#include "apps/run_config.h"
#include "core/config_file.h"

namespace realign::apps {
namespace {

const std::vector<std::string> kExtremes = {
    "0",          "-1",         "1",    "2",      "0.5",   "2147483647", "2147483648", "4294967296",
    "4294967297", "1099511627776", "9223372036854775807", "-9223372036854775808", "1e300", "-1e300",
    "1e-300",     ".nan",       ".inf", "-.inf",  "65536", "1048576"};

struct Field {
  std::string key;
  bool planned;  // read by the planner (else only the config is read)
  // Other fields an error may name for some values, as the rule involves both (mini_batches cannot exceed
  // prompts x samples_per_prompt).
  std::vector<std::string> related = {};
};

const std::vector<Field> kFields = {
    {"batch.prompts", true, {"batch.mini_batches", "batch.samples_per_prompt"}},
    {"batch.prompt_len", true, {"batch"}},
    {"batch.gen_len", true, {"batch", "batch.gen_len_max"}},
    {"batch.gen_len_max", true, {"batch"}},
    {"batch.gen_len_sigma", true},
    {"batch.samples_per_prompt", true, {"batch.mini_batches"}},
    {"batch.mini_batches", true},
    {"batch.epochs", true},
    // A config whose plan.mode is a preset the cluster cannot form is refused naming plan.mode.
    {"cluster.nodes", true, {"plan.mode"}},
    {"cluster.devices_per_node", true, {"plan.mode"}},
    {"plan.seed", true},
    {"plan.time_budget_s", true},
    {"plan.max_steps", true},
    {"plan.strategies_per_mesh_size", true},
    {"train.staleness", true},
    {"train.steps", false},
    {"train.seed", false},
    {"train.threads", false},
    {"train.checkpoint_every", false},
    {"train.eval_prompts", false},
    {"train.eval_every", false},
    {"train.optim.lr", false},
    {"train.optim.warmup_steps", false},
    {"train.optim.min_lr_ratio", false},
    {"train.optim.weight_decay", false},
    {"train.optim.beta1", false},
    {"train.optim.beta2", false},
    {"train.optim.eps", false},
    {"train.optim.grad_clip", false},
    {"train.ppo.gamma", false},
    {"train.ppo.lambda", false},
    {"train.ppo.clip_eps", false},
    {"train.ppo.value_clip", false},
    {"train.ppo.kl_coef", false},
    {"train.ppo.kl_target", false},
    {"train.ppo.kl_horizon", false},
    {"train.ppo.reward_clip", false},
    {"train.ppo.missing_stop_penalty", false},
    {"train.ppo.early_stop_kl", false},
    {"train.ppo.entropy_coef", false},
    {"train.ppo.value_loss_coef", false},
    {"train.ppo.behaviour_weight_cap", false},
    {"train.sampling.temperature", false, {"train.staleness"}},
    {"train.sampling.top_p", false},
    {"train.sampling.top_k", false},
    {"train.dpo.beta", false},
    {"train.dpo.label_smoothing", false},
    {"train.sft_stage.steps", false},
    {"train.sft_stage.batch", false},
    {"data.min_digits", false, {"data.max_digits"}},
    {"data.max_digits", false},
    {"data.seed", false},
    {"reward.timeout_s", false},
};

// A case's limit: the plan's budget is 0.2 s, so anything near this is a budget not held.
constexpr unsigned kCaseSeconds = 30;

// Runs the case in a child; returns "" when it planned or was refused naming an accepted field, else what
// went wrong (the child's stderr included).
std::string run_case(const std::string& base_file, const std::string& mode, const Field& field,
                     const std::string& value) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    alarm(kCaseSeconds);
    std::string outcome = "ok";
    try {
      Json j = load_config_file(base_file);
      apply_overrides(j, {"plan.mode=" + mode, "plan.time_budget_s=0.2", "plan.max_steps=2000",
                          field.key + "=" + value});
      const RunConfig config = run_config_from_json(j);
      if (field.planned) make_plan_report(config, "", /*compare_staleness=*/true);
    } catch (const Error& e) {
      outcome = "error " + e.path();
      bool named = e.path() == field.key;
      for (const auto& r : field.related) named |= e.path() == r;
      if (!named) outcome = "wrong field: " + std::string(e.what());
    } catch (const std::exception& e) {
      outcome = std::string("not a realign::Error: ") + e.what();
    }
    const bool good = outcome == "ok" || outcome.rfind("error ", 0) == 0;
    if (!good) {
      const std::string line = outcome + "\n";
      (void)!write(2, line.data(), line.size());
    }
    _exit(good ? 0 : 3);
  }
  close(fds[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) output.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::string what = WIFSIGNALED(status) ? (WTERMSIG(status) == SIGALRM
                                                ? "ran past " + std::to_string(kCaseSeconds) + " s"
                                                : "killed by signal " + std::to_string(WTERMSIG(status)))
                                         : "exit " + std::to_string(WEXITSTATUS(status));
  return what + ": " + output;
}

void check_extremes(const std::string& base_file, const std::string& mode,
                    const std::vector<std::string>& extra_values = {}) {
  for (const Field& f : kFields) {
    std::vector<std::string> values = kExtremes;
    values.insert(values.end(), extra_values.begin(), extra_values.end());
    for (const std::string& v : values) {
      const std::string problem = run_case(base_file, mode, f, v);
      EXPECT_EQ(problem, "") << f.key << "=" << v;
    }
  }
}

TEST(ConfigExtremes, GpuExampleEndsInAPlanOrAnErrorNamingTheField) {
  check_extremes(std::string(REALIGN_SOURCE_DIR) + "/examples/ppo_llama2_7b_16xh100.yaml", "search",
                 {"32768", "5000000000", "16777217"});
}

// A CPU cluster plans under the runtime's limits with static batching; DPO's calls take two sequences a pair.
TEST(ConfigExtremes, CpuExamplesEndInAPlanOrAnErrorNamingTheField) {
  check_extremes(std::string(REALIGN_SOURCE_DIR) + "/examples/addition_grpo.yaml", "search",
                 {"536870912", "536870913"});
  check_extremes(std::string(REALIGN_SOURCE_DIR) + "/examples/addition_grpo.yaml", "co-located");
  check_extremes(std::string(REALIGN_SOURCE_DIR) + "/examples/addition_dpo.yaml", "search", {"1073741824"});
}

}  // namespace
}  // namespace realign::apps

namespace realign::apps {
namespace {

RunConfig example_config(const std::vector<std::string>& overrides) {
  Json j = load_config_file(std::string(REALIGN_SOURCE_DIR) + "/examples/ppo_llama2_7b_16xh100.yaml");
  apply_overrides(j, overrides);
  return run_config_from_json(j);
}

// The staleness comparison shares plan.time_budget_s with the chosen search: a variant the budget left no
// time for is marked not planned instead of planned past the budget (each was given a fixed share of it).
TEST(PlanTimeBudget, StalenessComparisonSkipsWhatTheBudgetHasNoTimeFor) {
  const RunConfig spent = example_config({"plan.time_budget_s=0.000001"});
  const PlanReport a = make_plan_report(spent, "", /*compare_staleness=*/true);
  ASSERT_EQ(a.staleness_estimates.size(), 3u);
  for (const StalenessEstimate& e : a.staleness_estimates) EXPECT_EQ(e.skipped, !e.chosen) << e.staleness;
  EXPECT_NE(format_plan_table(a).find("staleness 1: not planned: plan.time_budget_s"), std::string::npos);
  EXPECT_EQ(plan_report_json(a)["staleness_not_planned"], Json::parse(R"(["1", "2"])"));

  const RunConfig ample = example_config({"plan.time_budget_s=60", "plan.max_steps=200"});
  const PlanReport b = make_plan_report(ample, "", /*compare_staleness=*/true);
  ASSERT_EQ(b.staleness_estimates.size(), 3u);
  for (const StalenessEstimate& e : b.staleness_estimates) EXPECT_FALSE(e.skipped) << e.staleness;
}

// Where forming the presets and candidates alone takes longer than the budget (the largest cluster, a budget
// of milliseconds), the table says that planning went over it and why.
TEST(PlanTimeBudget, PlanningOverTheBudgetSaysWhy) {
  const PlanReport r =
      make_plan_report(example_config({"cluster.nodes=16384", "plan.time_budget_s=0.01"}), "", true);
  EXPECT_GT(r.seconds, 0.01);
  EXPECT_GE(r.fixed_seconds, 0.005);
  EXPECT_NE(format_plan_table(r).find("over plan.time_budget_s (10 ms): planning took"), std::string::npos)
      << format_plan_table(r);
  const PlanReport small = make_plan_report(example_config({"plan.time_budget_s=5", "plan.max_steps=200"}), "",
                                            true);
  EXPECT_EQ(format_plan_table(small).find("over plan.time_budget_s"), std::string::npos);
}

// The largest cluster accepted is one the planner handles in a budget of seconds; one device more is refused
// naming the field, whichever way it is split.
TEST(PlanTimeBudget, ClusterBeyondWhatThePlannerHandlesIsRefusedByName) {
  auto refused = [](const std::vector<std::string>& overrides) {
    try {
      example_config(overrides);
    } catch (const Error& e) {
      return e.path();
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(refused({"cluster.nodes=16384"}), "<no error>");
  EXPECT_EQ(refused({"cluster.nodes=16385"}), "cluster.nodes");
  EXPECT_EQ(refused({"cluster.nodes=128", "cluster.devices_per_node=1024"}), "<no error>");
  EXPECT_EQ(refused({"cluster.nodes=129", "cluster.devices_per_node=1024"}), "cluster.nodes");
  EXPECT_EQ(refused({"cluster.devices_per_node=1025"}), "cluster.devices_per_node");
}

}  // namespace
}  // namespace realign::apps
