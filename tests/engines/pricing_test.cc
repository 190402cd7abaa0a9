// The engines' pricing over realign's simulator: generation priced inside the simulation (so that where
// iterations overlap, a faster engine generation shortens the iteration only as far as it is on the critical
// path), and plans as the engine runs them (as_engine_runs).
#include "engines/pricing.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_fixtures.h"

namespace realign {
namespace {

using testing::h100;

// GRPO with a 7B policy, 256 x 5 samples of 1k + 1k tokens, on AReaL's split of one node: SGLang on GPUs 0-3,
// FSDP training on 4-7.
struct Split {
  DataflowGraph g;
  ExecutionPlan plan;
};

Split areal_split(int64_t staleness) {
  Split s{build_graph(testing::grpo_qwen_7b(staleness)), {}};
  for (const auto& m : s.g.mfcs) {
    const bool gen = m.kind() == MfcKind::kGenerate;
    Strategy st = gen ? Strategy{4, 1, 1, 16} : Strategy{4, 1, 1, 16};
    if (m.kind() == MfcKind::kTrain) st = Strategy{4, 1, 1, 4, true, true};
    s.plan.assignments.push_back({m.name, gen ? DeviceMesh{0, 4} : DeviceMesh{4, 4}, st});
  }
  return s;
}

TEST(EnginePricing, OverlappedGenerationShortensTheIterationOnlyOnTheCriticalPath) {
  for (int64_t staleness : {0, 2}) {
    SCOPED_TRACE(staleness);
    const Split s = areal_split(staleness);
    const auto areal = engines::make_engine("areal");
    Simulator sim(s.g, h100(1), builtin_profile(h100(1).device));
    engines::EngineEvaluator ev(sim, areal->pricing(s.g), true);
    ev.set_placement_options({{"backend", "fsdp"}, {"zero_stage", 3}});
    const engines::EngineEstimate e = ev.estimate(s.plan);
    ASSERT_LT(e.generation_delta_s, -1.0);  // CUDA graphs save real time on the generate call itself
    // The training GPUs run their calls one after another every iteration: no engine generation, however
    // fast, makes the iteration shorter than that.
    double training_busy = 0;
    for (size_t i = 0; i < s.g.mfcs.size(); ++i)
      if (s.plan.assignments[i].mesh.first == 4)
        training_busy += e.simulation.calls[i].end_s - e.simulation.calls[i].start_s;
    EXPECT_GE(e.iteration_time_s, training_busy);
    EXPECT_DOUBLE_EQ(e.iteration_time_s, e.simulation.iteration_time_s + e.sync_delta_s + e.zero3_delta_s);
    if (staleness == 0) {
      // Synchronous, generation is on the critical path: the engine saves on the iteration what it saves on
      // the call.
      Simulator eager(s.g, h100(1), builtin_profile(h100(1).device));
      EXPECT_NEAR(e.simulation.iteration_time_s -
                      eager.run(engines::as_engine_runs(s.plan, s.g, areal->pricing(s.g))).iteration_time_s,
                  e.generation_delta_s, 1e-6 * e.simulation.iteration_time_s);
    }
  }
}

// The split's calls all on the node's 8 GPUs, data parallel (FSDP's layout).
ExecutionPlan on_one_node(const Split& s) {
  ExecutionPlan plan = s.plan;
  for (auto& a : plan.assignments) {
    a.mesh = DeviceMesh{0, 8};
    a.strategy.dp = 8;
    if (s.g.mfcs[size_t(s.g.mfc_index(a.mfc))].kind() == MfcKind::kTrain) a.strategy.micro_batches = 2;
  }
  return plan;
}

double actor_params(const DataflowGraph& g) {
  double n = 0;
  for (const ParamInfo& p : model_params(g.model(Role::kActor).spec, g.model(Role::kActor).head))
    n += double(p.numel());
  return n;
}

// AReaL's colocated mode: its memory saver moves the training side's state (the actor's weights, gradients
// and Adam state and the reference's weights, each sharded by FSDP over the 8 GPUs) to host memory around
// generation and back, every iteration.
TEST(EnginePricing, EnginesTakingTurnsPayTheTrainingSidesOffloadAndReload) {
  const Split s = areal_split(0);
  const ExecutionPlan plan = on_one_node(s);
  const auto areal = engines::make_engine("areal");
  const Cluster c = h100(1);
  Simulator sim(s.g, c, builtin_profile(c.device));
  engines::EngineEvaluator ev(sim, areal->pricing(s.g), true);
  ev.set_placement_options({{"backend", "fsdp"}, {"zero_stage", 3}});
  EXPECT_EQ(ev.estimate(plan).turn_swap_s, 0);  // apart: nothing moves
  ev.set_placement_options({{"backend", "fsdp"}, {"zero_stage", 3}, {"colocated", true}});
  const engines::EngineEstimate e = ev.estimate(plan);
  const double params = actor_params(s.g);
  const double per_device = params * (2 + 2 + 12) / 8 + params * 2 / 8;  // actor state + reference weights
  EXPECT_NEAR(e.turn_swap_s, 2 * per_device / builtin_profile(c.device).host_device_bandwidth.value,
              1e-9 * e.turn_swap_s);
  EXPECT_DOUBLE_EQ(e.iteration_time_s,
                   e.simulation.iteration_time_s + e.sync_delta_s + e.zero3_delta_s + e.turn_swap_s);
}

// veRL's FSDP with fsdp_size below the pool is HSDP: the actor and reference sharded over groups of that size
// and replicated across them (fsdp_workers.py create_device_mesh), so each GPU holds more of their state
// (weights, gradients, optimizer) and gathers over fewer ranks than sharding over the whole pool.
TEST(EnginePricing, HybridShardingHoldsAGroupsShareAndGathersWithinIt) {
  const Split s = areal_split(0);
  const ExecutionPlan plan = on_one_node(s);
  const auto verl = engines::make_engine("verl");
  const Cluster c = h100(1);
  Simulator sim(s.g, c, builtin_profile(c.device));
  engines::EngineEvaluator ev(sim, verl->pricing(s.g), true);
  ev.set_placement_options({{"backend", "fsdp"}, {"zero_stage", 3}});
  const engines::EngineEstimate full = ev.estimate(plan);
  ev.set_placement_options({{"backend", "fsdp"}, {"zero_stage", 3}, {"fsdp_size", 2}});
  const engines::EngineEstimate hybrid = ev.estimate(plan);
  const double params = actor_params(s.g);
  // Per GPU: the actor's weights and gradients and the reference's weights over 2 instead of 8, the actor's
  // optimizer state (realign's ZeRO-1 over 8) over 2 as well.
  const double more = params * (2 + 2) * (1.0 / 2 - 1.0 / 8) + params * 2 * (1.0 / 2 - 1.0 / 8) +
                      params * 12 * (1.0 / 2 - 1.0 / 8);
  EXPECT_NEAR(hybrid.device_peak_mem_bytes[0] - full.device_peak_mem_bytes[0], more, 1e-6 * more);
  EXPECT_LT(hybrid.zero3_delta_s, full.zero3_delta_s);
  EXPECT_GT(hybrid.zero3_delta_s, 0);
}

// With CUDA graphs the decoding step's launches and its collectives replay from the graph: neither the
// per-layer launch overhead nor the host's overhead per collective of an eager engine is paid.
TEST(EnginePricing, CudaGraphDecodingPaysNoHostOverheadPerCollective) {
  const HardwareProfile base = builtin_profile(h100(1).device);
  ASSERT_GT(base.collective_overhead_s.value, 0);
  engines::Pricing graphs;
  graphs.cuda_graph_decoding = true;
  const HardwareProfile g = engines::generation_profile(base, graphs);
  EXPECT_EQ(g.collective_overhead_s.value, 0);
  EXPECT_EQ(g.layer_launch_overhead_s.value, 0);
  EXPECT_EQ(g.intra_node_latency_s, base.intra_node_latency_s);  // the link itself is unchanged
  graphs.cuda_graph_decoding = false;
  EXPECT_EQ(engines::generation_profile(base, graphs), base);
}

// An engine's own pass efficiency on the device (the profile's engine_pass_efficiency) prices that
// engine's training and inference passes; its generation and every other engine's calls stay as they were.
// Each call's time on its own as `engine` prices it under `profile`.
std::vector<double> engine_call_times(const Split& s, const HardwareProfile& profile,
                                      const std::string& engine) {
  Simulator sim(s.g, h100(1), profile);
  engines::EngineEvaluator ev(sim, engines::make_engine(engine)->pricing(s.g), true);
  std::vector<double> t;
  for (size_t i = 0; i < s.g.mfcs.size(); ++i)
    t.push_back(sim.call_estimate(int(i), s.plan.assignments[i]).time_s);
  return t;
}

TEST(EnginePricing, AnEnginesOwnPassEfficiencyPricesOnlyItsPasses) {
  const Split s = areal_split(0);
  HardwareProfile profile = builtin_profile(h100(1).device);
  const std::vector<double> before = engine_call_times(s, profile, "areal");
  profile.engine_pass_efficiency["areal"] = {2 * profile.pass_efficiency.value, "test"};
  const std::vector<double> after = engine_call_times(s, profile, "areal"),
                            other = engine_call_times(s, profile, "verl");
  for (size_t i = 0; i < s.g.mfcs.size(); ++i) {
    SCOPED_TRACE(s.g.mfcs[i].name);
    if (s.g.mfcs[i].kind() == MfcKind::kGenerate) {
      EXPECT_EQ(after[i], before[i]);
    } else {
      EXPECT_LT(after[i], 0.9 * before[i]);  // twice the rate over the passes, which dominate these calls
    }
  }
  for (size_t i = 0; i < s.g.mfcs.size(); ++i)
    if (s.g.mfcs[i].kind() != MfcKind::kGenerate) {
      EXPECT_EQ(other[i], before[i]) << s.g.mfcs[i].name;
    }
}

// An engine's own decoding rate on the device (engine_decode_efficiency, a share of the profile's
// decode_bandwidth_efficiency) slows only that engine's generation; its passes and the other engines' calls
// stay as they were.
TEST(EnginePricing, AnEnginesOwnDecodeEfficiencyPricesOnlyItsGeneration) {
  const Split s = areal_split(0);
  HardwareProfile profile = builtin_profile(h100(1).device);
  const std::vector<double> before = engine_call_times(s, profile, "areal"),
                            other_before = engine_call_times(s, profile, "verl");
  profile.engine_decode_efficiency["areal"] = {0.5, "test"};
  const std::vector<double> after = engine_call_times(s, profile, "areal"),
                            other = engine_call_times(s, profile, "verl");
  for (size_t i = 0; i < s.g.mfcs.size(); ++i) {
    SCOPED_TRACE(s.g.mfcs[i].name);
    EXPECT_EQ(other[i], other_before[i]);
    if (s.g.mfcs[i].kind() == MfcKind::kGenerate) {
      EXPECT_GT(after[i], 1.2 * before[i]);  // half the rate over the decoding reads, most of this call
      EXPECT_LT(after[i], 2.0 * before[i] + 1e-9);  // and nothing else slower than half
    } else {
      EXPECT_EQ(after[i], before[i]);
    }
  }
}

// The serving engine's share of each GPU (a script's vLLM gpu_memory_utilization, the placement option
// "generation_memory_fraction") bounds generation's own weights, activations and KV cache: a share below
// that need does not fit, whatever the device's free memory.
TEST(EnginePricing, GenerationFitsInTheServingEnginesShareOfMemory) {
  const Split s = areal_split(0);
  const Cluster c = h100(1);
  Simulator sim(s.g, c, builtin_profile(c.device));
  engines::EngineEvaluator ev(sim, engines::make_engine("areal")->pricing(s.g), true);
  const Json base = {{"backend", "fsdp"}, {"zero_stage", 3}};
  ev.set_placement_options(base);
  ASSERT_TRUE(ev.estimate(s.plan).fits);
  const size_t gen = size_t(s.g.mfc_index("actor_gen"));
  const double need = sim.call_estimate(int(gen), s.plan.assignments[gen]).memory.total();
  const double share = need / sim.profile().memory_bytes.value;
  Json options = base;
  options["generation_memory_fraction"] = 1.01 * share;
  ev.set_placement_options(options);
  EXPECT_TRUE(ev.estimate(s.plan).fits);
  options["generation_memory_fraction"] = 0.99 * share;
  ev.set_placement_options(options);
  EXPECT_FALSE(ev.estimate(s.plan).fits);
}

// Either per-engine coefficient of a profile, for a misspelt engine.
TEST(EnginePricing, AnEfficiencyForNoKnownEngineIsRefusedNamingIt) {
  const Split s = areal_split(0);
  for (const char* key : {"engine_pass_efficiency", "engine_decode_efficiency"}) {
    HardwareProfile profile = builtin_profile(h100(1).device);
    (std::string(key) == "engine_pass_efficiency"
         ? profile.engine_pass_efficiency
         : profile.engine_decode_efficiency)["nemo_rl"] = {0.3, "test"};
    Simulator sim(s.g, h100(1), profile);
    try {
      engines::EngineEvaluator ev(sim, engines::make_engine("areal")->pricing(s.g), true);
      ADD_FAILURE() << key << ": accepted an efficiency for 'nemo_rl'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("profile." + std::string(key) + ".nemo_rl: not an engine"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(EnginePricing, FollowersRunWithTheirLeadersMicroBatchSize) {
  const Split s = areal_split(0);
  engines::Pricing p;
  p.micro_batch_size_from = {{"actor_inf", "actor_train"}, {"no_such_call", "actor_train"}};
  const ExecutionPlan runs = engines::as_engine_runs(s.plan, s.g, p);
  // actor_train: 1,280 / 4 steps / 4 ranks = 80 a rank in 4 micro-batches of 20; actor_inf's 320 a rank in
  // micro-batches of 20.
  EXPECT_EQ(runs.assignments[size_t(s.g.mfc_index("actor_inf"))].strategy.micro_batches, 16);
  EXPECT_EQ(runs.assignments[size_t(s.g.mfc_index("ref_inf"))].strategy.micro_batches, 16);  // not a follower
  engines::Pricing host;
  host.host_resident = {Role::kRef, Role::kReward};  // the graph has no reward model
  EXPECT_EQ(engines::as_engine_runs(s.plan, s.g, host).offload, std::vector<Role>{Role::kRef});
}

}  // namespace
}  // namespace realign
