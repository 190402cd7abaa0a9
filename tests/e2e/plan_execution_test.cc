// `realign train` on 4 local worker processes with a plan whose calls use different layouts: generation on a
// tensor-parallel pair of devices, the reference living on two devices (its first call's layout, where the
// actor's parameters are reallocated when RL starts), the critic's inference on one device, training on all
// four (actor d2t2p1, critic d2t2p1). Checks the run learns nothing wrong about placement: it completes,
// moves parameters where the layouts differ (and none where a rank already holds its slice), records the
// measured timeline per call and layout, and resumes exactly from a checkpoint of the sharded models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/config_file.h"
#include "cost/simulation_result.h"
#include "testing/temp_dir.h"
#include "train_cli.h"

namespace realign {
namespace {
using testing::TempDir;
namespace fs = std::filesystem;

const char* kPlan = R"({"name": "mixed", "mfcs": [
 {"name": "actor_gen", "mesh": "2-3", "dp": 1, "tp": 2, "pp": 1},
 {"name": "actor_inf", "mesh": "0-1", "dp": 1, "tp": 2, "pp": 1},
 {"name": "ref_inf", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "3", "dp": 1, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 2, "tp": 2, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 2, "tp": 2, "pp": 1}]})";

int run(const std::string& args, std::string* output) { return testing::run_realign(args, output); }
std::map<int64_t, Json> metrics(const std::string& dir) { return testing::read_metrics(dir); }

TEST(PlanExecution, PerCallLayoutsRunWithReallocationAndResumeExactly) {
  TempDir tmp;
  testing::write_file(tmp.file("plan.json"), kPlan);
  const std::string run_dir = tmp.file("run");
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  std::string out;
  const int code = run("train " + config +
                           " cluster.devices_per_node=4 plan.mode=file plan.file=" + tmp.file("plan.json") +
                           " batch.prompts=16 train.steps=3 train.sft_stage.steps=2 train.eval_prompts=8"
                           " train.threads=1 train.checkpoint_every=4 --no-progress --out " +
                           run_dir,
                       &out);
  ASSERT_EQ(code, 0) << out;

  const auto full = metrics(run_dir);
  ASSERT_TRUE(full.count(5)) << out;                        // 2 SFT steps, then RL steps 3-5
  EXPECT_GT(full.at(4)["realloc/bytes"].get<double>(), 0);  // the critic's missing tp half
  EXPECT_GT(full.at(4)["data/bytes"].get<double>(), 0);

  const Timeline t = timeline_from_json(load_config_file(run_dir + "/timeline.json"), "timeline.json");
  std::map<std::string, TimelineEvent> calls, moves, data;
  for (const auto& e : t.events) {
    if (e.kind == "call") calls[e.name] = e;
    if (e.kind == "realloc") moves[e.name] = e;
    if (e.kind == "data") data[e.name] = e;
  }
  ASSERT_TRUE(calls.count("actor_gen") && calls.count("ref_inf") && calls.count("critic_inf"));
  EXPECT_EQ(calls["actor_gen"].first_device, 2);
  EXPECT_EQ(calls["actor_gen"].n_devices, 2);
  EXPECT_EQ(calls["critic_inf"].first_device, 3);
  // Devices 2-3 hold the actor's tp shards in d2t2p1 already; device 3 holds one tp half of the critic and
  // receives the other; the reference lives in ref_inf's layout, so that call moves nothing.
  EXPECT_EQ(moves.at("actor_gen").bytes, 0);
  EXPECT_GT(moves.at("critic_inf").bytes, 0);
  EXPECT_EQ(moves.count("ref_inf"), 0u);
  // Rows go from the generation's devices (2-3, where every rank holds every response) straight to each
  // consumer: the critic's inference on device 3 receives nothing (through a batch layout over the 4 devices
  // it would get 3/4 of the rows back), the reference's on 0-1 receives them all.
  EXPECT_EQ(data.count("critic_inf"), 0u);
  ASSERT_TRUE(data.count("ref_inf"));
  EXPECT_GT(data.at("ref_inf").bytes, 0);
  EXPECT_TRUE(fs::exists(run_dir + "/timeline_estimated.json"));

  // Resume from the step-4 checkpoint (actor and critic gathered from their tp shards) and compare step 5.
  const std::string resumed = tmp.file("resumed");
  fs::copy(run_dir, resumed, fs::copy_options::recursive);
  fs::remove_all(resumed + "/checkpoints/step-5");
  testing::write_file(resumed + "/checkpoints/latest", "step-4\n");
  ASSERT_EQ(run("train --resume " + resumed + " --no-progress", &out), 0) << out;
  const auto again = metrics(resumed);
  for (int64_t step : {5})
    for (const auto& [key, value] : full.at(step).items())
      if (key.rfind("time/", 0) != 0) {
        EXPECT_EQ(again.at(step)[key], value) << "step " << step << " " << key;
      }
}

// Generation and inference on other layouts than the co-located one (tensor parallel, subsets of devices,
// parameters reallocated before each call) leave the training mathematics unchanged: the metrics of the two
// runs agree within fp32 round-off.
TEST(PlanExecution, MovedCallsGiveTheCoLocatedCurve) {
  TempDir tmp;
  testing::write_file(tmp.file("moved.json"), R"({"name": "moved", "mfcs": [
 {"name": "actor_gen", "mesh": "2-3", "dp": 1, "tp": 2, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 2, "tp": 2, "pp": 1},
 {"name": "ref_inf", "mesh": "0-1", "dp": 1, "tp": 2, "pp": 1},
 {"name": "critic_inf", "mesh": "1", "dp": 1, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1}]})");
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string& common = testing::kShortRun;
  std::string out;
  testing::write_file(tmp.file("colocated.json"), R"({"name": "colocated", "mfcs": [
 {"name": "actor_gen", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1}]})");
  ASSERT_EQ(run("train " + config + " plan.mode=file plan.file=" + tmp.file("colocated.json") + common +
                    tmp.file("a"),
                &out),
            0)
      << out;
  ASSERT_EQ(
      run("train " + config + " plan.mode=file plan.file=" + tmp.file("moved.json") + common + tmp.file("b"),
          &out),
      0)
      << out;
  const auto a = metrics(tmp.file("a")), b = metrics(tmp.file("b"));
  ASSERT_EQ(a.size(), b.size());
  // Every rank holds the whole model in d4t1p1, so the moved calls need no parameter bytes (each rank cuts
  // its own slices), but their batch rows do move.
  EXPECT_EQ(b.at(4)["realloc/bytes"].get<double>(), 0);
  EXPECT_GT(b.at(4)["data/bytes"].get<double>(), 0);
  testing::expect_same_curve(a, b,
                             {"reward/mean", "kl/mean", "loss/policy", "loss/value", "entropy", "loss/sft"});
}

// A plan that shards the actor's and the critic's Adam state over their train calls' dp ranks (ZeRO-1, as the
// search may decide) trains as the unsharded plan does: the same curve within fp32 round-off.
TEST(PlanExecution, ZeroOneFromThePlanGivesTheUnshardedCurve) {
  TempDir tmp;
  const std::string calls = R"(
 {"name": "actor_gen", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},)";
  testing::write_file(tmp.file("plain.json"), R"({"name": "plain", "mfcs": [)" + calls + R"(
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1}]})");
  testing::write_file(tmp.file("zero1.json"), R"({"name": "zero1", "mfcs": [)" + calls + R"(
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1, "zero1": true},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1, "zero1": true}]})");
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string& common = testing::kShortRun;
  std::string out;
  for (const char* name : {"plain", "zero1"})
    ASSERT_EQ(run("train " + config + " plan.mode=file plan.file=" + tmp.file(std::string(name) + ".json") +
                      common + tmp.file(name),
                  &out),
              0)
        << out;
  const auto a = metrics(tmp.file("plain")), b = metrics(tmp.file("zero1"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_GT(testing::expect_same_curve(a, b,
                                       {"reward/mean", "kl/mean", "loss/policy", "loss/value", "loss/sft",
                                        "grad_norm/actor", "grad_norm/critic"}),
            10);
}

// The acceptance of the RLHF issue: PPO with the searched plan and with the co-located preset gives the same
// curve (same seed, fp32, within round-off). On 4 CPU workers the search places the calls apart (train calls
// on single devices, dp 1) while the preset trains with dp 4: reallocation, data moves and the dp degree
// leave the mathematics unchanged.
TEST(PlanExecution, SearchedPlanGivesTheCoLocatedPresetCurve) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string& common = testing::kShortRun;
  std::string out;
  ASSERT_EQ(run("train " + config + " plan.mode=co-located" + common + tmp.file("a"), &out), 0) << out;
  ASSERT_EQ(run("train " + config + " plan.mode=search" + common + tmp.file("b"), &out), 0) << out;
  const Json plan_a = Json::parse(testing::read_file(tmp.file("a") + "/plan.json"));
  const Json plan_b = Json::parse(testing::read_file(tmp.file("b") + "/plan.json"));
  EXPECT_NE(plan_a["mfcs"], plan_b["mfcs"]) << "the search chose the preset itself: nothing is compared";
  const auto a = metrics(tmp.file("a")), b = metrics(tmp.file("b"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_GE(testing::expect_same_curve(a, b,
                                       {"reward/mean", "kl/mean", "loss/policy", "loss/value", "entropy",
                                        "loss/sft", "grad_norm/actor", "grad_norm/critic"}),
            3 * 2 + 3 * 7);
}

// Behaviour log-probs from the sampling (train.ppo.behaviour_logprobs=generation, as ReaL's PPO): the plan
// has no actor_inf, the generation (here pipelined over two stages of a tensor-parallel pair) hands its
// log-probs to the actor's update, and the run follows the curve of the run that recomputes them, within fp32
// round-off (a KV-cached decoding step and a full forward sum in different orders).
TEST(PlanExecution, BehaviourLogprobsFromTheSamplingGiveTheRecomputedCurve) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string& common = testing::kShortRun;
  testing::write_file(tmp.file("sampled.json"), R"({"name": "sampled", "mfcs": [
 {"name": "actor_gen", "mesh": "0-3", "dp": 1, "tp": 2, "pp": 2, "micro_batches": 2},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1}]})");
  std::string out;
  ASSERT_EQ(run("train " + config + " plan.mode=co-located" + common + tmp.file("a"), &out), 0) << out;
  ASSERT_EQ(run("train " + config + " train.ppo.behaviour_logprobs=generation plan.mode=file plan.file=" +
                    tmp.file("sampled.json") + common + tmp.file("b"),
                &out),
            0)
      << out;
  const auto a = metrics(tmp.file("a")), b = metrics(tmp.file("b"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_GE(
      testing::expect_same_curve(a, b, {"reward/mean", "kl/mean", "loss/policy", "loss/value", "entropy"}),
      3 * 5);
  // A plan for the recomputing run names actor_inf; given to this run, it is refused naming the call.
  EXPECT_NE(run("train " + config + " train.ppo.behaviour_logprobs=generation plan.mode=file plan.file=" +
                    tmp.file("a") + "/plan.json" + common + tmp.file("c"),
                &out),
            0);
  EXPECT_NE(out.find("actor_inf"), std::string::npos) << out;
}

// GRPO without a KL term (models.ref: none, as DAPO runs it) holds no reference model and runs no ref_inf,
// and learns exactly as the same run with a reference whose KL coefficient is 0.
TEST(PlanExecution, NoReferenceModelGivesTheZeroKlCurve) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_grpo.yaml";
  const std::string& common = testing::kShortRun;
  std::string out;
  ASSERT_EQ(
      run("train " + config + " train.ppo.kl_coef=0 plan.mode=co-located" + common + tmp.file("a"), &out), 0)
      << out;
  ASSERT_EQ(run("train " + config + " models.ref=none train.ppo.kl_coef=0 plan.mode=co-located" + common +
                    tmp.file("b"),
                &out),
            0)
      << out;
  const auto a = metrics(tmp.file("a")), b = metrics(tmp.file("b"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_GE(testing::expect_same_curve(a, b, {"reward/mean", "loss/policy", "entropy", "loss/sft"}), 3 * 3);
  const Json plan = load_config_file(tmp.file("b") + "/plan.json");
  for (const auto& m : plan["mfcs"]) EXPECT_NE(m["name"], "ref_inf");
  for (const auto& [step, rec] : b) EXPECT_FALSE(rec.contains("kl/mean")) << step;
  EXPECT_TRUE(a.rbegin()->second.contains("kl/mean"));
}

// ReMax end to end on 4 workers: the sampled and the greedy generation run together on disjoint halves, and
// the run follows the all-device plan's curve.
TEST(PlanExecution, RemaxGenerationsApartGiveTheCoLocatedCurve) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_remax.yaml";
  const std::string& common = testing::kShortRun;
  auto plan = [&](const std::string& name, const std::string& gen, const std::string& greedy) {
    testing::write_file(tmp.file(name), R"({"name": ")" + name + R"(", "mfcs": [
 {"name": "actor_gen", "mesh": ")" + gen + R"(", "dp": 2, "tp": 1, "pp": 1},
 {"name": "actor_greedy_gen", "mesh": ")" + greedy +
                                            R"(", "dp": 2, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-3", "dp": 4, "tp": 1, "pp": 1}]})");
    return tmp.file(name);
  };
  std::string out;
  ASSERT_EQ(run("train " + config + " plan.mode=file plan.file=" + plan("same.json", "0-1", "0-1") + common +
                    tmp.file("a"),
                &out),
            0)
      << out;
  ASSERT_EQ(run("train " + config + " plan.mode=file plan.file=" + plan("apart.json", "0-1", "2-3") + common +
                    tmp.file("b"),
                &out),
            0)
      << out;
  const auto a = metrics(tmp.file("a")), b = metrics(tmp.file("b"));
  ASSERT_EQ(a.size(), b.size());
  ASSERT_TRUE(b.count(6)) << out;
  EXPECT_TRUE(b.at(6).contains("time/actor_greedy_gen_s"));
  EXPECT_GE(testing::expect_same_curve(
                a, b, {"reward/mean", "kl/mean", "loss/policy", "entropy", "loss/sft", "grad_norm/actor"}),
            3 * 2 + 3 * 5);
}

// Asynchronous PPO (train.staleness=1) with the generation and the reference on devices 2-3 and the actor's
// and critic's calls on 0-1: the next iteration's generation runs beside this iteration's inference and
// updates, the actor's new weights reach the generation by reallocation, and the run follows the curve of
// the same staleness on the co-located preset (the version each batch is generated with is exact, whatever
// the timing).
TEST(PlanExecution, AsynchronousGenerationApartGivesTheCoLocatedCurve) {
  TempDir tmp;
  const std::string config = std::string(REALIGN_SOURCE_DIR) + "/examples/addition_ppo.yaml";
  const std::string common = " train.staleness=1" + testing::kShortRun;
  testing::write_file(tmp.file("apart.json"), R"({"name": "apart", "mfcs": [
 {"name": "actor_gen", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1},
 {"name": "ref_inf", "mesh": "2-3", "dp": 2, "tp": 1, "pp": 1},
 {"name": "actor_inf", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1},
 {"name": "critic_inf", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1},
 {"name": "actor_train", "mesh": "0-1", "dp": 2, "tp": 1, "pp": 1},
 {"name": "critic_train", "mesh": "0-1", "dp": 1, "tp": 2, "pp": 1}]})");
  std::string out;
  ASSERT_EQ(run("train " + config + " plan.mode=co-located" + common + tmp.file("a"), &out), 0) << out;
  ASSERT_EQ(
      run("train " + config + " plan.mode=file plan.file=" + tmp.file("apart.json") + common + tmp.file("b"),
          &out),
      0)
      << out;
  const auto a = metrics(tmp.file("a")), b = metrics(tmp.file("b"));
  ASSERT_EQ(a.size(), b.size());
  ASSERT_TRUE(b.count(6)) << out;
  EXPECT_EQ(b.at(6)["weights/lag"], 1);
  EXPECT_GT(b.at(5)["realloc/bytes"].get<double>(), 0);  // the actor's new weights to the generation
  EXPECT_TRUE(b.at(6).contains("time/idle_share/actor_gen"));
  EXPECT_GE(testing::expect_same_curve(a, b,
                                       {"reward/mean", "kl/mean", "loss/policy", "loss/value", "entropy",
                                        "behaviour_weight/mean", "grad_norm/actor", "grad_norm/critic"}),
            3 * 8);
}

}  // namespace
}  // namespace realign
