#include "cost/simulator.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "cost/fixtures.h"

namespace realign {
namespace {

using testing::assign;
using testing::make_cluster;
using testing::make_graph;

// PPO on LLaMA-2-7B (all four models), 2 nodes x 8 H100.
struct Ppo {
  DataflowGraph graph = make_graph("ppo", "llama2-7b", 128, 256, 256, 4);
  Cluster cluster = make_cluster(2, 8);
  HardwareProfile profile = default_profile(cluster.device);
};

ExecutionPlan colocated() {
  ExecutionPlan p;
  p.name = "co-located";
  for (const char* m :
       {"actor_gen", "ref_inf", "reward_inf", "actor_inf", "critic_inf", "actor_train", "critic_train"})
    p.assignments.push_back(assign(m, 0, 2, 8, 1, 2));
  return p;
}

// Generation on node 0, everything else on node 1 (ref and reward side by side).
ExecutionPlan disaggregated() {
  ExecutionPlan p;
  p.name = "disaggregated";
  p.assignments = {assign("actor_gen", 0, 2, 4, 1),      assign("ref_inf", 8, 1, 4, 1),
                   assign("reward_inf", 12, 1, 4, 1),    assign("actor_inf", 8, 2, 4, 1),
                   assign("critic_inf", 8, 2, 4, 1),     assign("actor_train", 8, 2, 4, 1, 4),
                   assign("critic_train", 8, 2, 4, 1, 4)};
  return p;
}

// No device runs two events at once.
void expect_no_overlap(const Timeline& t) {
  for (size_t i = 0; i < t.events.size(); ++i)
    for (size_t j = i + 1; j < t.events.size(); ++j) {
      const auto& a = t.events[i];
      const auto& b = t.events[j];
      const bool share =
          a.first_device < b.first_device + b.n_devices && b.first_device < a.first_device + a.n_devices;
      if (!share) continue;
      EXPECT_TRUE(a.end_s <= b.start_s + 1e-12 || b.end_s <= a.start_s + 1e-12)
          << a.name << "/" << a.kind << " and " << b.name << "/" << b.kind;
    }
}

// The fixtures the tests below run (Simulator::run does not validate a plan): validate_plan takes each as it
// is, in the graph's call order, and each is the placement its name says; a near miss is refused.
TEST(Simulator, TestPlansAreValid) {
  Ppo s;
  for (const ExecutionPlan& fixture : {colocated(), disaggregated()}) {
    ExecutionPlan plan = fixture;
    ASSERT_NO_THROW(validate_plan(s.graph, s.cluster, plan)) << fixture.name;
    EXPECT_EQ(plan, fixture) << fixture.name;
  }
  for (const MfcAssignment& a : colocated().assignments) {
    EXPECT_EQ(a.mesh, (DeviceMesh{0, 16})) << a.mfc;
    EXPECT_EQ(a.strategy, colocated().assignments[0].strategy) << a.mfc;
  }
  for (const MfcAssignment& a : disaggregated().assignments)
    EXPECT_EQ(a.mesh.end() <= 8, a.mfc == "actor_gen") << a.mfc;  // generation alone on node 0
  ExecutionPlan beyond = disaggregated();
  beyond.assignments[2] = assign("reward_inf", 16, 1, 4, 1);  // devices 16-19 of 0-15
  EXPECT_THROW(validate_plan(s.graph, s.cluster, beyond), Error);
}

TEST(Simulator, ColocatedPlanRunsCallsBackToBack) {
  Ppo s;
  Simulator sim(s.graph, s.cluster, s.profile);
  const ExecutionPlan plan = colocated();
  const SimulationResult r = sim.run(plan);
  ASSERT_EQ(r.calls.size(), 7u);
  // Same layout everywhere: no reallocation; calls follow each other on all 16 devices. Rows stay where
  // they were produced, except that a train call takes each of its 4 mini-batches as a segment of the whole
  // batch, of which each dp rank holds its share: those rows move between the dp ranks first.
  EXPECT_EQ(r.realloc_bytes, 0);
  double t = 0;
  int data_events = 0;
  for (size_t i = 0; i < r.calls.size(); ++i) {
    const Mfc& mfc = s.graph.mfcs[i];
    EXPECT_EQ(r.calls[i].name, mfc.name);
    EXPECT_EQ(r.calls[i].realloc_s, 0);
    if (mfc.kind() == MfcKind::kTrain) {
      // Every input in one exchange: their bandwidth times and one latency.
      double data_s = 0, latency_s = 0;
      for (const std::string& in : mfc.inputs)
        for (const DataSpec& d : s.graph.data)
          if (d.name == in && in != "prompts") {
            const TransferCost c =
                data_move_cost(mfc.n_seqs, d.bytes_per_seq, plan.assignments[i].layout(),
                               plan.assignments[i].layout(), s.cluster, s.profile, mfc.mini_batches);
            data_s += c.time_s - c.latency_s;
            latency_s = std::max(latency_s, c.latency_s);
          }
      EXPECT_GT(latency_s, 0) << mfc.name;
      data_s += latency_s;
      EXPECT_GT(data_s, 0) << mfc.name;
      EXPECT_DOUBLE_EQ(r.calls[i].data_s, data_s) << mfc.name;
      t += data_s;
      ++data_events;
    } else {
      EXPECT_EQ(r.calls[i].data_s, 0) << mfc.name;
    }
    EXPECT_DOUBLE_EQ(r.calls[i].start_s, t);
    const double time = estimate_call(s.graph, s.cluster, s.profile, int(i), plan.assignments[i]).time_s;
    EXPECT_NEAR(r.calls[i].end_s - r.calls[i].start_s, time, 1e-12 * time);
    t = r.calls[i].end_s;
  }
  // The iteration's own work outside the calls ends it, on every device.
  EXPECT_DOUBLE_EQ(r.iteration_time_s, t + s.profile.iteration_overhead_s.value);
  ASSERT_EQ(r.timeline.events.size(), 8u + data_events);
  EXPECT_EQ(r.timeline.events.back().kind, "host");
  EXPECT_EQ(r.timeline.events.back().n_devices, 16);
  EXPECT_DOUBLE_EQ(r.timeline.events.back().start_s, t);
  for (double idle : r.device_idle_fraction) EXPECT_NEAR(idle, 0.0, 1e-12);
  EXPECT_TRUE(r.fits) << r.oom_report;
  EXPECT_TRUE(r.oom_report.empty());
  expect_no_overlap(r.timeline);
}

TEST(Simulator, DisaggregatedPlanReallocatesOverlapsAndMovesData) {
  Ppo s;
  Simulator sim(s.graph, s.cluster, s.profile);
  const SimulationResult r = sim.run(disaggregated());
  expect_no_overlap(r.timeline);
  const auto& gen = r.calls[0];
  // The actor's parameters live on its train layout (d2t4p1@8): generation needs a copy on d2t4p1@0.
  const auto& actor = s.graph.model(Role::kActor);
  const double full = 2.0 * double(actor.spec.total_params());
  EXPECT_GT(gen.realloc_s, 0);
  // Two replicas of 4 tp shards, nothing held on node 0; each tp rank needs its own copy of the replicated
  // norms (2 per layer + the final one).
  const double norms = 2.0 * double(actor.spec.n_layers * 2 * actor.spec.hidden + actor.spec.hidden);
  EXPECT_DOUBLE_EQ(r.realloc_bytes, 2 * (full + 3 * norms));
  // ref and reward run side by side on disjoint halves of node 1 once the sequences arrive.
  const auto& ref = r.calls[1];
  const auto& reward = r.calls[2];
  EXPECT_GT(ref.data_s, 0);
  EXPECT_DOUBLE_EQ(ref.start_s, reward.start_s);
  EXPECT_GE(ref.start_s, gen.end_s);
  // critic_inf uses the critic's train layout: no copy; actor_train waits for every input.
  EXPECT_EQ(r.calls[3].realloc_s, 0);
  for (size_t i = 0; i < 4; ++i) EXPECT_GE(r.calls[4].start_s, r.calls[i].end_s);
  // Node 0 idles while node 1 trains.
  EXPECT_GT(r.device_idle_fraction[0], 0.1);
  for (double f : r.device_idle_fraction) {
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
  }
  // Generation's devices hold only the temporary copy and the KV cache: less than the training devices.
  EXPECT_LT(r.device_peak_mem_bytes[0], r.device_peak_mem_bytes[8]);
  EXPECT_GT(r.calls[0].peak_mem_bytes, full / 4);  // its tp = 4 weight shard at least
}

TEST(Simulator, RepeatedRunsAreIdenticalAndUseTheCache) {
  Ppo s;
  Simulator sim(s.graph, s.cluster, s.profile);
  const SimulationResult a = sim.run(disaggregated());
  const size_t cached = sim.cache_size();
  EXPECT_GT(cached, 0u);
  const SimulationResult b = sim.run(disaggregated());
  EXPECT_EQ(sim.cache_size(), cached);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == sim.run(colocated()));
}

TEST(Simulator, ReportsTheDeviceAndCallThatDoNotFit) {
  // SFT of LLaMA-2-7B on one 80 GB device: 16 bytes/param of Adam state alone is 108 GB.
  const DataflowGraph g = make_graph("sft", "llama2-7b", 8, 512, 0);
  const Cluster c = make_cluster(1, 8);
  Simulator sim(g, c, default_profile(c.device));
  ExecutionPlan plan;
  plan.assignments = {assign("actor_train", 3, 1, 1, 1)};
  validate_plan(g, c, plan);  // the plan module accepts it
  const SimulationResult r = sim.run(plan);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.oom_report.find("device 3 needs"), std::string::npos) << r.oom_report;
  EXPECT_NE(r.oom_report.find("during actor_train"), std::string::npos) << r.oom_report;
  EXPECT_NE(r.oom_report.find("limit 67.1 GiB"), std::string::npos) << r.oom_report;  // 0.9 x 80 GB
  EXPECT_NE(r.oom_report.find("actor optimizer state 75.3 GiB"), std::string::npos) << r.oom_report;
  EXPECT_NE(r.oom_report.find("actor_train activations"), std::string::npos) << r.oom_report;
  EXPECT_GT(r.device_peak_mem_bytes[3], 16.0 * 6738415616);
  EXPECT_EQ(r.device_peak_mem_bytes[0], 0);
  // Spread over 8 devices with tp 8 it fits.
  plan.assignments = {assign("actor_train", 0, 1, 8, 1, 2)};
  const SimulationResult ok = sim.run(plan);
  EXPECT_TRUE(ok.fits) << ok.oom_report;
}

TEST(Simulator, ResultAndTimelineJsonRoundTrip) {
  Ppo s;
  Simulator sim(s.graph, s.cluster, s.profile);
  const SimulationResult r = sim.run(disaggregated());
  const Json j = to_json(r);
  EXPECT_EQ(simulation_result_from_json(Json::parse(j.dump()), "result"), r);
  EXPECT_EQ(timeline_from_json(to_json(r.timeline), "timeline"), r.timeline);
  Json bad = to_json(r.timeline);
  bad["events"][1]["kind"] = "compute";
  try {
    timeline_from_json(bad, "timeline");
    FAIL() << "accepted a bad kind";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timeline.events[1].kind"), std::string::npos) << e.what();
  }
}

TEST(Simulator, ModelsNeverTrainedStayOnTheirFirstCallsLayout) {
  // ReMax: the reward model scores the sampled and the greedy sequences; its home is reward_inf's layout, so
  // reward_greedy_inf on other devices gets a reallocated copy, and reward_inf's devices keep its weights.
  const DataflowGraph g = make_graph("remax", "llama-small", 32, 64, 64);
  const Cluster c = make_cluster(1, 8);
  Simulator sim(g, c, default_profile(c.device));
  ExecutionPlan plan;
  plan.assignments = {assign("actor_gen", 0, 4, 1, 1),         assign("actor_greedy_gen", 4, 4, 1, 1),
                      assign("ref_inf", 0, 2, 1, 1),           assign("reward_inf", 2, 2, 1, 1),
                      assign("reward_greedy_inf", 4, 2, 1, 1), assign("actor_inf", 0, 8, 1, 1),
                      assign("actor_train", 0, 8, 1, 1)};
  validate_plan(g, c, plan);  // the plan module accepts it
  const SimulationResult r = sim.run(plan);
  const auto index = [&](const char* name) { return size_t(g.mfc_index(name)); };
  EXPECT_EQ(r.calls[index("reward_inf")].realloc_s, 0);
  EXPECT_GT(r.calls[index("reward_greedy_inf")].realloc_s, 0);
  EXPECT_EQ(r.calls[index("ref_inf")].realloc_s, 0);
  // The actor trains with d8t1p1 on all 8 devices: each generation's d4t1p1 layout lies on devices that
  // already hold full replicas, so they move nothing and use the resident weights (no extra copy in memory).
  EXPECT_EQ(r.calls[index("actor_gen")].realloc_s, 0);
  EXPECT_EQ(r.calls[index("actor_greedy_gen")].realloc_s, 0);
  const ModelRole& actor = g.model(Role::kActor);
  const CallEstimate gen = estimate_call(g, c, sim.profile(), int(index("actor_gen")), plan.assignments[0]);
  EXPECT_DOUBLE_EQ(r.calls[index("actor_gen")].peak_mem_bytes,
                   16.0 * double(actor.spec.total_params()) +
                       2.0 * double(g.model(Role::kRef).spec.total_params()) + gen.memory.transient());
  const double reward_bytes = 2.0 * double(g.model(Role::kReward).spec.total_params());
  // reward_greedy_inf on devices 4, 5 (dp 2): two full replicas of the reward model (value head).
  const ModelRole& reward = g.model(Role::kReward);
  double value_model = 0;
  for (const auto& p : model_params(reward.spec, reward.head)) value_model += 2.0 * double(p.numel());
  EXPECT_LT(value_model, reward_bytes);  // no LM head
  EXPECT_DOUBLE_EQ(r.realloc_bytes, 2 * value_model);
  // The greedy generation starts with its own sequences once devices 4-7 are free; the two generations
  // overlap.
  EXPECT_LT(r.calls[index("actor_greedy_gen")].start_s, r.calls[index("actor_gen")].end_s);
  EXPECT_TRUE(r.fits) << r.oom_report;
}

// An offloaded model (never trained) holds no device memory between its calls; each of its calls first loads
// its shards from the host, every device over its own link, and holds them only during the call.
TEST(Simulator, OffloadedModelsLoadFromTheHostForEachCall) {
  Ppo ppo;
  Simulator sim(ppo.graph, ppo.cluster, ppo.profile);
  ExecutionPlan plan = disaggregated();
  const size_t ref = size_t(ppo.graph.mfc_index("ref_inf"));
  plan.assignments[ref].strategy.micro_batches = 16;  // small logits: the devices' peak is not ref_inf's
  validate_plan(ppo.graph, ppo.cluster, plan);
  const SimulationResult resident = sim.run(plan);
  plan.offload = {Role::kRef};
  validate_plan(ppo.graph, ppo.cluster, plan);
  const SimulationResult offloaded = sim.run(plan);
  const ModelRole& model = ppo.graph.model(Role::kRef);
  // ref_inf runs d1t4p1 on devices 8-11: each loads a quarter of the weights (tp shards of equal size here).
  const ShardSizes shards = shard_sizes(model_params(model.spec, model.head), model.spec.n_layers, 4, 1);
  const double shard_bytes = 2.0 * double(shards.max());
  double loaded = 0;  // every device's shard, replicated parameters (norms) on each of them
  for (int t = 0; t < 4; ++t) loaded += 2.0 * double(shards.at(0, t));
  EXPECT_DOUBLE_EQ(offloaded.offload_bytes, loaded);
  EXPECT_EQ(resident.offload_bytes, 0);
  EXPECT_EQ(resident.calls[ref].realloc_s, 0);
  EXPECT_DOUBLE_EQ(offloaded.calls[ref].realloc_s, shard_bytes / ppo.profile.host_device_bandwidth.value);
  bool load_event = false;
  for (const auto& e : offloaded.timeline.events)
    load_event =
        load_event || (e.name == "ref_inf" && e.kind == "load" && e.first_device == 8 && e.n_devices == 4);
  EXPECT_TRUE(load_event);
  expect_no_overlap(offloaded.timeline);
  // Devices 8-11 no longer keep the reference's weights for the whole iteration: their peak (during the
  // training calls) drops by exactly its shard.
  for (int d = 8; d < 12; ++d)
    EXPECT_NEAR(offloaded.device_peak_mem_bytes[size_t(d)],
                resident.device_peak_mem_bytes[size_t(d)] - shard_bytes, 1e-6 * shard_bytes)
        << d;
  EXPECT_GT(offloaded.iteration_time_s, resident.iteration_time_s - 1e-12);
}

// An engine's colocated mode takes turns (set_generation_turns): while generation runs, the homes on its
// devices (the four models' weights, the actor's and critic's gradients and optimizer state) are in host
// memory, so generation needs only its own copy, cache and activations there; every other call is unchanged,
// and the result says what each device's homes hold (what the engine moves each way).
TEST(Simulator, GenerationTurnsLeaveTheHomesOutOfGenerationsMemory) {
  Ppo ppo;
  Simulator sim(ppo.graph, ppo.cluster, ppo.profile);
  const ExecutionPlan plan = colocated();
  const size_t gen = size_t(ppo.graph.mfc_index("actor_gen"));
  const SimulationResult resident = sim.run(plan);
  EXPECT_TRUE(resident.device_home_bytes.empty());
  sim.set_generation_turns(true);
  const SimulationResult turns = sim.run(plan);
  ASSERT_EQ(turns.device_home_bytes.size(), 16u);
  ASSERT_EQ(turns.device_turn_peak_mem_bytes.size(), 16u);
  // The homes: every model's weights, and for the trained ones 2 bytes of gradients and 12 of Adam state,
  // per parameter of its tp shard (d2t8p1: no ZeRO-1, the optimizer state whole on each replica).
  double home = 0;
  for (const ModelRole& m : ppo.graph.models) {
    const ShardSizes sh = shard_sizes(model_params(m.spec, m.head), m.spec.n_layers, 8, 1);
    home += double(sh.at(0, 0)) * (m.trained ? 2.0 + 2.0 + 12.0 : 2.0);
  }
  const CallEstimate& g = sim.call_estimate(int(gen), plan.assignments[gen]);
  for (int d = 0; d < 16; ++d) {
    EXPECT_NEAR(turns.device_home_bytes[size_t(d)], home, 1e-9 * home) << d;
    // Generation's turn: its transient need alone (no held copies or batches in flight without staleness).
    EXPECT_NEAR(turns.device_turn_peak_mem_bytes[size_t(d)], resident.calls[gen].peak_mem_bytes - home,
                1e-9 * home)
        << d;
  }
  EXPECT_NEAR(turns.calls[gen].peak_mem_bytes, resident.calls[gen].peak_mem_bytes - home, 1e-9 * home);
  EXPECT_GT(g.memory.kv_cache, 0);
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    if (i == gen) continue;
    EXPECT_EQ(turns.calls[i].peak_mem_bytes, resident.calls[i].peak_mem_bytes) << i;
  }
  // The devices' peak is now a training call's (homes plus its activations), no longer generation's.
  for (int d = 0; d < 16; ++d)
    EXPECT_LE(turns.device_peak_mem_bytes[size_t(d)], resident.device_peak_mem_bytes[size_t(d)]) << d;
  // The time is the engine's to price (engines/pricing.h): the simulation's own does not change.
  EXPECT_EQ(turns.iteration_time_s, resident.iteration_time_s);
}

TEST(Simulator, PerDeviceMemoryFollowsEachDevicesPipelineStage) {
  const DataflowGraph g = make_graph("sft", "llama2-7b", 16, 512, 0);
  const Cluster c = make_cluster(1, 8);
  Simulator sim(g, c, default_profile(c.device));
  ExecutionPlan plan;
  plan.assignments = {assign("actor_train", 4, 2, 1, 2, 4)};  // d2t1p2 on devices 4-7
  validate_plan(g, c, plan);                                  // the plan module accepts it
  const SimulationResult r = sim.run(plan);
  const ModelRole& actor = g.model(Role::kActor);
  const ShardSizes shards = shard_sizes(model_params(actor.spec, actor.head), actor.spec.n_layers, 1, 2);
  const CallEstimate e = estimate_call(g, c, sim.profile(), 0, plan.assignments[0]);
  ASSERT_EQ(e.stages.size(), 2u);
  // Stage 0 (devices 4, 5) keeps 2 micro-batches in flight, stage 1 (devices 6, 7) one plus the logits.
  EXPECT_EQ(e.stages[0].activations, 2 * e.stages[1].activations);
  EXPECT_GT(e.stages[1].logits, 0);
  for (int d : {4, 5})
    EXPECT_DOUBLE_EQ(r.device_peak_mem_bytes[size_t(d)],
                     16.0 * double(shards.at(0, 0)) + e.stages[0].transient());
  for (int d : {6, 7})
    EXPECT_DOUBLE_EQ(r.device_peak_mem_bytes[size_t(d)],
                     16.0 * double(shards.at(1, 0)) + e.stages[1].transient());
  EXPECT_EQ(r.device_peak_mem_bytes[0], 0);
  EXPECT_DOUBLE_EQ(r.calls[0].peak_mem_bytes,
                   std::max(r.device_peak_mem_bytes[4], r.device_peak_mem_bytes[6]));
}

}  // namespace
}  // namespace realign

namespace realign {
namespace {

TEST(Simulator, CpuCallsSideBySideSlowEachOthersMessages) {
  // PPO on 4 CPU workers of 2 cores: the reference and the reward model side by side on disjoint pairs (each
  // with tensor parallelism, so they send messages), or one after the other on the same pair.
  const DataflowGraph g = testing::make_graph("ppo", "llama-tiny", 32, 4, 3, 2);
  const Cluster cpu = make_cluster(1, 4, "cpu-gloo");
  auto plan = [](int reward_first) {
    ExecutionPlan p;
    p.assignments = {assign("actor_gen", 0, 4, 1, 1),
                     assign("ref_inf", 0, 1, 2, 1),
                     assign("reward_inf", reward_first, 1, 2, 1),
                     assign("actor_inf", 0, 4, 1, 1),
                     assign("critic_inf", 0, 4, 1, 1),
                     assign("actor_train", 0, 4, 1, 1),
                     assign("critic_train", 0, 4, 1, 1)};
    return p;
  };
  HardwareProfile profile = default_profile(cpu.device);
  profile.idle_worker_load.value = 0;  // the workers between calls sleep: only the busy ranks load the cores
  Simulator sim(g, cpu, profile);
  const SimulationResult apart = sim.run(plan(0)), beside = sim.run(plan(2));
  const size_t ref = size_t(g.mfc_index("ref_inf")), reward = size_t(g.mfc_index("reward_inf"));
  // One after the other, a pair's 2 ranks fit the 2 cores; side by side, the other pair's ranks are busy for
  // part of the call or all of it.
  EXPECT_DOUBLE_EQ(apart.calls[ref].busy_ranks, 2);
  EXPECT_DOUBLE_EQ(apart.calls[reward].busy_ranks, 2);
  EXPECT_GT(beside.calls[ref].busy_ranks, 2.5);
  EXPECT_LE(beside.calls[ref].busy_ranks, 4);
  EXPECT_GT(beside.calls[reward].busy_ranks, 2.5);
  const double ref_alone = apart.calls[ref].end_s - apart.calls[ref].start_s;
  EXPECT_GT(beside.calls[ref].end_s - beside.calls[ref].start_s, ref_alone * 1.01);
  // The 4-rank calls fill the node on their own.
  EXPECT_DOUBLE_EQ(beside.calls[size_t(g.mfc_index("critic_inf"))].busy_ranks, 4);
  // Accelerators compute on their own: one pass, no contention recorded.
  const Cluster gpus = make_cluster(1, 4);
  Simulator gpu_sim(g, gpus, default_profile(gpus.device));
  for (const CallResult& c : gpu_sim.run(plan(2)).calls) EXPECT_EQ(c.busy_ranks, 0) << c.name;
}

}  // namespace
}  // namespace realign
