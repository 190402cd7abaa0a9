// The training loop end to end on the addition task: learning, exact resume, and bad input.
#include "train/trainer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "apps/run_config.h"
#include "core/config_file.h"
#include "core/read_file.h"
#include "testing/temp_dir.h"
#include "train/checkpoint_store.h"
#include "train/metrics_log.h"
#include "train/run_dir.h"

namespace realign::train {
namespace {
using testing::TempDir;
namespace fs = std::filesystem;

const char* kBase = R"(
algorithm: ppo
models: {actor: llama-tiny}
batch: {prompts: 16, prompt_len: 4, gen_len: 3, mini_batches: 2, epochs: 1}
cluster: {nodes: 1, devices_per_node: 1, device: cpu-gloo}
plan: {mode: co-located}
train:
  steps: 4
  seed: 3
  threads: 1
  eval_prompts: 16
  checkpoint_every: 3
  sft_stage: {steps: 3, batch: 16}
data: {task: addition, max_digits: 1}
)";

TrainerInput input_from(const std::string& yaml, const std::vector<std::string>& overrides,
                        const std::string& dir) {
  Json raw = parse_yaml(yaml, "test.yaml");
  apply_overrides(raw, overrides);
  apps::RunConfig rc = apps::run_config_from_json(raw);
  TrainerInput in;
  in.algorithm = rc.algorithm;
  in.sections = rc.training;
  in.raw_config = rc.raw;
  in.run_dir = create_run_dir(dir).root;
  in.progress = false;
  return in;
}

// Metrics without the wall-clock fields, which differ between any two runs.
std::vector<Json> deterministic_metrics(const std::string& dir) {
  std::vector<Json> out;
  for (Json r : read_metrics(RunDir{dir}.metrics_file())) {
    for (auto it = r.begin(); it != r.end();)
      it = it.key().rfind("time/", 0) == 0 ? r.erase(it) : std::next(it);
    out.push_back(r);
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// With staleness 1 the step-6 checkpoint holds iteration 4's generated rows, in flight.
TEST(Trainer, ResumeReproducesTheUninterruptedMetricsExactly) {
  TempDir tmp;
  for (const char* algorithm : {"ppo", "grpo"})
    for (const char* staleness : {"0", "1"}) {
      std::vector<std::string> ov = {std::string("algorithm=") + algorithm, "batch.samples_per_prompt=2",
                                     "train.ppo.adaptive_kl=true",
                                     std::string("train.staleness=") + staleness};
      const std::string name = std::string(algorithm) + "-" + staleness;
      std::string a = tmp.file(name + "-a"), b = tmp.file(name + "-b");
      run_training(input_from(kBase, ov, a), comm::single_rank_group());
      // Interrupted at the end of the SFT stage (a stage boundary), then mid-RL, resumed each time.
      TrainerInput first = input_from(kBase, ov, b);
      first.stop_after = 3;
      EXPECT_EQ(run_training(first, comm::single_rank_group()).last_step, 3);
      TrainerInput second = input_from(kBase, ov, b);
      second.resume = true;
      second.stop_after = 6;
      EXPECT_EQ(run_training(second, comm::single_rank_group()).first_step, 4);
      TrainerInput third = input_from(kBase, ov, b);
      third.resume = true;
      TrainResult r = run_training(third, comm::single_rank_group());
      EXPECT_EQ(r.first_step, 7);
      EXPECT_EQ(r.last_step, 7);
      std::vector<Json> ma = deterministic_metrics(a), mb = deterministic_metrics(b);
      ASSERT_EQ(ma.size(), 8u);  // step 0 (evaluation) and steps 1..7
      ASSERT_EQ(ma.size(), mb.size());
      for (size_t i = 0; i < ma.size(); ++i) EXPECT_EQ(ma[i], mb[i]) << name << " record " << i;
      EXPECT_TRUE(ma.back().contains("reward/mean"));
    }
}

// Staleness is exact: 0 is the synchronous run, a staleness-1 run repeats bit for bit, generates each
// iteration after the first with the weights one update older than a synchronous run would, and trains
// with the decoupled objective.
TEST(Trainer, StalenessIsAnExactVersionNotATiming) {
  TempDir tmp;
  auto run = [&](const std::vector<std::string>& ov, const std::string& name) {
    std::vector<std::string> all = ov;
    all.push_back("train.checkpoint_every=0");
    run_training(input_from(kBase, all, tmp.file(name)), comm::single_rank_group());
    return deterministic_metrics(tmp.file(name));
  };
  const std::vector<Json> sync = run({}, "sync"), zero = run({"train.staleness=0"}, "zero");
  EXPECT_EQ(sync, zero);
  const std::vector<Json> one = run({"train.staleness=1"}, "one"),
                          again = run({"train.staleness=1"}, "again");
  EXPECT_EQ(one, again);
  ASSERT_EQ(one.size(), sync.size());
  // Steps 4-7 are RL iterations 1-4: the first generates with the starting weights either way; the others
  // with the weights of two iterations back.
  for (size_t i = 4; i < one.size(); ++i) {
    const int64_t iteration = int64_t(i) - 3;
    EXPECT_EQ(sync[i]["weights/lag"], 0);
    EXPECT_EQ(one[i]["weights/lag"], iteration == 1 ? 0 : 1) << "iteration " << iteration;
    EXPECT_EQ(one[i]["weights/version"], std::max<int64_t>(0, iteration - 2));
    EXPECT_TRUE(one[i].contains("behaviour_weight/mean"));
    EXPECT_FALSE(sync[i].contains("behaviour_weight/mean"));
  }
  // The first iteration's batch is the same; training on older samples changes what follows.
  EXPECT_EQ(one[4]["reward/mean"], sync[4]["reward/mean"]);
  EXPECT_NE(one[6]["loss/policy"], sync[6]["loss/policy"]);
}

// PPO on the README's main example (examples/addition_ppo.yaml: 60 SFT steps, then 150 PPO steps of 64
// prompts) raises held-out greedy accuracy, averaged over two seeds. What moves the gain is the seed and the
// CPU, not a sample of prompts: the evaluation's 256 prompts are the same in every run, and a run is
// deterministic on one machine. Measured gains on a 2-core AMD EPYC were +0.25, +0.22 and +0.39 (seeds 1-3):
// the mean of seeds 1 and 2 (0.235) clears 0.10 by 0.135, the weakest seed by 0.12. Between CPUs, BLAS
// kernels round differently and the runs drift apart: the main job's synchronous run of seed 1 ends at 0.602
// on an Intel Xeon and on one AMD EPYC, 0.586 on another (0.016 apart), well inside that margin. (The test it
// replaces, 60 PPO steps of 32 prompts judged on 100 prompts, asserted +0.10 where one machine measured
// exactly +0.10.)
TEST(Trainer, PpoRaisesHeldOutAccuracyOnTheMainExample) {
  TempDir tmp;
  std::ifstream file(std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml");
  ASSERT_TRUE(file.good());
  const std::string example((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  double gain = 0;
  for (int seed : {1, 2}) {
    TrainerInput in =
        input_from(example,
                   {"train.seed=" + std::to_string(seed), "train.threads=1", "cluster.devices_per_node=1",
                    "plan.mode=co-located", "train.checkpoint_every=150", "train.eval_every=0"},
                   tmp.file("run" + std::to_string(seed)));
    const TrainResult r = run_training(in, comm::single_rank_group());
    ASSERT_GE(r.eval_before_rl, 0);
    gain += (r.eval_after - r.eval_before_rl) / 2;
    std::printf("seed %d: held-out accuracy after SFT %.3f, after PPO %.3f\n", seed, r.eval_before_rl,
                r.eval_after);
    EXPECT_TRUE(fs::exists(RunDir{r.run_dir}.timeline_file()));
    EXPECT_EQ(latest_checkpoint_step(RunDir{r.run_dir}.checkpoints()), 210);  // 60 SFT + 150 PPO steps
  }
  EXPECT_GT(gain, 0.10) << "mean gain of held-out accuracy over two seeds";
}

TEST(Trainer, CheckpointFromAnotherModelIsRefusedAndLeftIntact) {
  TempDir tmp;
  std::string dir = tmp.file("run");
  TrainerInput first = input_from(kBase, {}, dir);
  first.stop_after = 3;
  run_training(first, comm::single_rank_group());
  TrainerInput other = input_from(kBase, {"models.actor=gpt2-tiny"}, dir);
  other.resume = true;
  std::string msg = error_of([&] { run_training(other, comm::single_rank_group()); });
  EXPECT_NE(msg.find("another model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("actor"), std::string::npos) << msg;
  EXPECT_EQ(latest_checkpoint_step(RunDir{dir}.checkpoints()), 3);
  EXPECT_NO_THROW(open_checkpoint(RunDir{dir}.checkpoints(), 3));
}

TEST(Trainer, FailingOrGarbageRewardCommandIsAClearErrorAndKeepsTheLastCheckpoint) {
  TempDir tmp;
  std::string dir = tmp.file("run");
  TrainerInput first = input_from(kBase, {}, dir);
  first.stop_after = 3;
  run_training(first, comm::single_rank_group());
  std::string before = read_file(RunDir{dir}.checkpoints() + "/step-3/manifest.json");
  for (const char* command : {"exit 3", "echo not-a-number", "cat > /dev/null; echo 1"}) {
    TrainerInput bad =
        input_from(kBase, {"reward.kind=command", std::string("reward.command=") + command}, dir);
    bad.resume = true;
    std::string msg = error_of([&] { run_training(bad, comm::single_rank_group()); });
    EXPECT_NE(msg.find(command), std::string::npos) << msg;
    EXPECT_EQ(latest_checkpoint_step(RunDir{dir}.checkpoints()), 3);
    EXPECT_EQ(read_file(RunDir{dir}.checkpoints() + "/step-3/manifest.json"), before);
  }
}

TEST(Trainer, BadJsonlLineNamesFileAndLine) {
  TempDir tmp;
  testing::write_file(tmp.file("prompts.jsonl"), "{\"prompt\": \"1+1=\", \"answer\": \"2\"}\n{not json\n");
  TrainerInput in = input_from(
      kBase, {"data.task=files", "data.prompts=" + tmp.file("prompts.jsonl"), "train.sft_stage.steps=0"},
      tmp.file("run"));
  std::string msg = error_of([&] { run_training(in, comm::single_rank_group()); });
  EXPECT_NE(msg.find("prompts.jsonl:2"), std::string::npos) << msg;
}

// The CLI end to end: two local data-parallel workers (the binary re-executed by the launcher), the report,
// and a resume that extends the run.
TEST(TrainCommand, TwoLocalWorkersReportAndResume) {
  TempDir tmp;
  testing::write_file(tmp.file("config.yaml"), kBase);
  const std::string realign = std::string(REALIGN_BINARY_DIR) + "/src/apps/realign";
  const std::string dir = tmp.file("run");
  auto run = [](const std::string& cmd) { return std::system((cmd + " > /dev/null 2>&1").c_str()); };
  ASSERT_EQ(run(realign + " train " + tmp.file("config.yaml") +
                " cluster.devices_per_node=2 train.steps=2 train.threads=1 --no-progress --out " + dir),
            0);
  EXPECT_TRUE(fs::exists(dir + "/plan.json"));
  EXPECT_TRUE(fs::exists(dir + "/timeline_estimated.json"));
  EXPECT_EQ(latest_checkpoint_step(RunDir{dir}.checkpoints()), 5);
  ASSERT_EQ(run(realign + " report " + dir), 0);
  EXPECT_TRUE(fs::exists(dir + "/curves.svg"));
  EXPECT_TRUE(fs::exists(dir + "/timeline.svg"));
  ASSERT_EQ(run(realign + " train --resume " + dir + " train.steps=3 --no-progress"), 0);
  std::vector<Json> m = read_metrics(RunDir{dir}.metrics_file());
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m.back()["step"], 6);
  // A bad key is an error before anything runs; the run's checkpoint stays.
  EXPECT_NE(run(realign + " train --resume " + dir + " train.stepz=4 --no-progress"), 0);
  EXPECT_EQ(latest_checkpoint_step(RunDir{dir}.checkpoints()), 6);
}

TEST(Trainer, UnknownAlgorithmOrKeyIsRejected) {
  TempDir tmp;
  EXPECT_NE(error_of([&] { input_from(kBase, {"algorithm=ppg"}, tmp.file("r")); }).find("ppg"),
            std::string::npos);
  EXPECT_NE(error_of([&] { input_from(kBase, {"train.ppo.gamme=0.9"}, tmp.file("r")); }).find("gamme"),
            std::string::npos);
  EXPECT_NE(error_of([&] { input_from(kBase, {"reward.kind=oracle"}, tmp.file("r")); }).find("reward.kind"),
            std::string::npos);
}

}  // namespace
}  // namespace realign::train
