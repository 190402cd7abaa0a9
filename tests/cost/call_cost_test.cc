#include "cost/call_cost.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cost/calibration.h"
#include "cost/fixtures.h"

namespace realign {
namespace {

using testing::assign;
using testing::make_cluster;
using testing::make_graph;

TEST(CallCost, Llama7bForwardFlopsMatchHandComputation) {
  const ModelSpec m = builtin_model("llama2-7b");
  const double h = 4096, L = 32, I = 11008, V = 32000, T = 1000, ctx = 512;
  // Matmuls: 2 FLOPs per multiply-add over every weight matrix except the embedding lookup.
  const double matmul = 2 * T * (L * (4 * h * h + 3 * h * I) + V * h);
  const double attention = 2 * T * L * (2 * h * ctx);  // QK^T and AV
  EXPECT_DOUBLE_EQ(m.forward_flops(T, ctx), matmul + attention);
  // ~2 N tokens: N counts the embedding (no FLOPs) and norms; the difference is under 2%.
  const double two_n_t = 2.0 * double(m.total_params()) * T;
  EXPECT_NEAR(m.forward_flops(T, 0) / two_n_t, 1.0, 0.02);

  const DataflowGraph g = make_graph("ppo", "llama2-7b", 16, 256, 256);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = default_profile(c.device);
  const int train = g.mfc_index("actor_train");
  const CallEstimate e = estimate_call(g, c, p, train, assign("actor_train", 0, 2, 4, 1));
  EXPECT_DOUBLE_EQ(e.flops, 3.0 * m.forward_flops(16.0 * 512, 256));
}

TEST(CallCost, TrainTimeIsBoundedBelowByFlopsAtAchievedRate) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 512, 512);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = default_profile(c.device);
  const int train = g.mfc_index("actor_train");
  const CallEstimate e = estimate_call(g, c, p, train, assign("actor_train", 0, 2, 4, 1, 4));
  const double ideal = e.flops / (8 * p.peak_flops.value * p.gemm_efficiency.value);
  EXPECT_GT(e.time_s, ideal);
  EXPECT_LT(e.time_s, 3 * ideal);  // attention at lower efficiency, comm and launches: not wildly more
  EXPECT_GT(e.comm_s, 0);          // tp and dp communication are charged
  EXPECT_NEAR(e.compute_s + e.comm_s + e.overhead_s, e.time_s, 1e-12 * e.time_s);
}

// A PPO epoch is another pass over the whole batch: two epochs of 2 mini-batches are 4 optimizer steps of
// half the batch each, twice the work of one epoch (not 4 steps of a quarter).
TEST(CallCost, EveryEpochPassesOverTheWholeBatch) {
  AlgorithmConfig config;
  config.algorithm = Algorithm::kPpo;
  for (const auto& role : algorithm_roles(Algorithm::kPpo)) config.models[role] = builtin_model("llama2-7b");
  config.batch = BatchShape{64, 256, 256};
  config.batch.mini_batches = 2;
  const DataflowGraph one = build_graph(config);
  config.batch.epochs = 2;
  const DataflowGraph two = build_graph(config);
  const int train = one.mfc_index("actor_train");
  EXPECT_EQ(two.mfcs[train].max_seqs_per_step(), 32);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = default_profile(c.device);
  const CallEstimate a = estimate_call(one, c, p, train, assign("actor_train", 0, 2, 4, 1));
  const CallEstimate b = estimate_call(two, c, p, train, assign("actor_train", 0, 2, 4, 1));
  EXPECT_DOUBLE_EQ(b.flops, 2 * a.flops);
  EXPECT_NEAR(b.compute_s, 2 * a.compute_s, 1e-9 * a.compute_s);
}

// With the optimizer's memory traffic made free, a train call's compute is 3 forwards of its batch (forward
// and backward), each the inference call's compute in the same layout; a pipelined update of a pair loss
// (DPO) runs a no-grad pipelined forward before 1F1B (runtime/call_forward.h): 4.
TEST(CallCost, APipelinedPairLossUpdateCostsOneMoreForward) {
  const Cluster c = make_cluster(1, 8);
  HardwareProfile p = default_profile(c.device);
  p.memory_bandwidth.value = 1e30;
  for (const char* algorithm : {"ppo", "dpo"}) {
    const DataflowGraph g = make_graph(algorithm, "llama2-7b", 64, 256, 256);
    const int train = g.mfc_index("actor_train"),
              inference = g.mfc_index(g.algorithm == Algorithm::kPpo ? "actor_inf" : "ref_inf");
    for (int pp : {1, 2, 4}) {
      const double t = estimate_call(g, c, p, train, assign("actor_train", 0, 1, 2, pp, 4)).compute_s;
      const double f = estimate_call(g, c, p, inference, assign("x", 0, 1, 2, pp, 4)).compute_s;
      EXPECT_NEAR(t / f, pp > 1 && g.algorithm == Algorithm::kDpo ? 4.0 : 3.0, 1e-6)
          << algorithm << " pp " << pp;
    }
  }
}

// PPO on llama-tiny, 8 devices of a node, links of unbounded bandwidth: a collective costs its latencies.
struct LatencyOnly {
  DataflowGraph g = make_graph("ppo", "llama-tiny", 32, 4, 3);
  Cluster c = make_cluster(1, 8);
  HardwareProfile p = [this] {
    HardwareProfile q = default_profile(c.device);
    q.intra_node_bandwidth.value = 1e30;
    return q;
  }();
  // The estimate of the call `a` names (assign's first argument), in its layout.
  CallEstimate estimate(const MfcAssignment& a) const {
    return estimate_call(g, c, p, g.mfc_index(a.mfc), a);
  }
};

TEST(CallCost, TensorParallelCallsPayTheEmbeddingAndHeadCollectives) {
  // ref_inf (language-model head) and critic_inf (value head) of the same model and batch: at tp = 1 they
  // communicate nothing; at tp = 2 both pay the embedding's all-reduce and the layers' two per layer, and the
  // language-model head three more (max, sum and target logit of its vocabulary-parallel log-softmax), each
  // one latency per micro-batch.
  const LatencyOnly t;
  const double latency = t.p.intra_node_latency_s.value;
  for (int mb : {1, 4}) {
    const CallEstimate ref = t.estimate(assign("ref_inf", 0, 1, 2, 1, mb));
    const CallEstimate critic = t.estimate(assign("critic_inf", 0, 1, 2, 1, mb));
    const double layers = double(t.g.model(Role::kCritic).spec.n_layers);
    EXPECT_NEAR(critic.comm_s, mb * (1 + 2 * layers) * latency, 1e-12) << mb;
    EXPECT_NEAR(ref.comm_s - critic.comm_s, mb * 3 * latency, 1e-12) << mb;
    EXPECT_EQ(t.estimate(assign("ref_inf", 0, 1, 1, 1, mb)).comm_s, 0);
  }
}

// The updates' collectives, latency only, as train/train_calls.cc runs them. At tp 2 the policy update's
// head adds, per micro-batch, four all-reduces forward (max, sum, target logit and the entropy) and one
// backward (the hidden state's gradient); the value head none. At dp 2 every optimizer step syncs the
// gradients and two scalars (the loss's weight, the step's figures), and a call splits the batch and
// normalises the advantages over dp, a policy update also summing the batch's statistics.
TEST(CallCost, UpdatesPayTheCollectivesTheRuntimeRuns) {
  const LatencyOnly t;
  const double latency = t.p.intra_node_latency_s.value;
  const int actor = t.g.mfc_index("actor_train"), critic = t.g.mfc_index("critic_train");
  const double steps = double(t.g.mfcs[actor].train_steps());
  ASSERT_EQ(steps, double(t.g.mfcs[critic].train_steps()));
  for (int mb : {1, 4}) {
    const double tp_actor = t.estimate(assign("actor_train", 0, 1, 2, 1, mb)).comm_s;
    const double tp_critic = t.estimate(assign("critic_train", 0, 1, 2, 1, mb)).comm_s;
    EXPECT_NEAR(tp_actor - tp_critic, steps * mb * 5 * latency, 1e-12) << mb;
  }
  const double dp_actor = t.estimate(assign("actor_train", 0, 2, 1, 1)).comm_s;
  const double dp_critic = t.estimate(assign("critic_train", 0, 2, 1, 1)).comm_s;
  EXPECT_NEAR(dp_actor, (3 * steps + 3) * latency, 1e-12);
  EXPECT_NEAR(dp_critic, (3 * steps + 2) * latency, 1e-12);
}

TEST(CallCost, MoreMicroBatchesShrinkThePipelineBubble) {
  const DataflowGraph g = make_graph("sft", "llama2-7b", 256, 1024, 0);
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = default_profile(c.device);
  double previous_bubble = 1, previous_time = 1e300;
  for (int mb : {1, 2, 4, 8, 16}) {
    const CallEstimate e = estimate_call(g, c, p, 0, assign("actor_train", 0, 1, 2, 4, mb));
    EXPECT_NEAR(e.bubble_fraction, 3.0 / (mb + 3.0), 1e-12);
    EXPECT_LT(e.bubble_fraction, previous_bubble);
    EXPECT_LT(e.time_s, previous_time) << mb << " micro-batches";
    previous_bubble = e.bubble_fraction;
    previous_time = e.time_s;
  }
}

TEST(CallCost, DecodeIsSlowerWithLongerContext) {
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = default_profile(c.device);
  auto decode_time = [&](int64_t prompt_len) {
    // Decode alone: the generate call minus the same call generating nothing (its prefill).
    const DataflowGraph with = make_graph("ppo", "llama2-7b", 32, prompt_len, 256);
    DataflowGraph without = with;
    without.mfcs[0].gen_len = 0;
    const MfcAssignment a = assign("actor_gen", 0, 1, 2, 1, 1);
    return estimate_call(with, c, p, 0, a).time_s - estimate_call(without, c, p, 0, a).time_s;
  };
  const double short_ctx = decode_time(128), long_ctx = decode_time(2048);
  EXPECT_GT(short_ctx, 0);
  EXPECT_GT(long_ctx, short_ctx);
  // Memory-bound: a step reads at least the weight shard.
  const double shard_bytes = 2.0 * double(builtin_model("llama2-7b").total_params()) / 2;
  EXPECT_GT(short_ctx, 256 * shard_bytes / (p.memory_bandwidth.value * p.decode_bandwidth_efficiency.value));
}

// A serving engine's decoding step reads a local layer's cache only as far back as its window (Gemma 3 1B: 22
// of 26 layers over 512 tokens); realign's runtime (static batching) reads every layer's whole cache.
TEST(CallCost, ALocalLayersWindowBoundsTheCacheADecodingStepReads) {
  const Cluster c = make_cluster(1, 8);
  const HardwareProfile p = default_profile(c.device);
  auto decode_time = [&](int64_t prompt_len, bool window, Batching batching) {
    DataflowGraph with = make_graph("ppo", "gemma3-1b", 32, prompt_len, 256);
    with.mfcs[0].generation.batching = batching;
    if (!window)
      for (ModelRole& m : with.models) m.spec.sliding_window = 0;
    DataflowGraph without = with;
    without.mfcs[0].gen_len = 0;
    const MfcAssignment a = assign("actor_gen", 0, 1, 1, 1, 1);
    return estimate_call(with, c, p, 0, a).time_s - estimate_call(without, c, p, 0, a).time_s;
  };
  const Batching engine = Batching::kContinuous, runtime = Batching::kStatic;
  EXPECT_DOUBLE_EQ(decode_time(128, true, engine), decode_time(128, false, engine));  // within the window
  EXPECT_LT(decode_time(16384, true, engine), decode_time(16384, false, engine));
  EXPECT_NEAR(decode_time(16384, true, runtime), decode_time(16384, false, runtime),
              1e-9 * decode_time(16384, false, runtime));
}

TEST(CallCost, HalfTheGemmEfficiencyNeverMakesTrainingFaster) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 512, 512, 4);
  const Cluster c = make_cluster(2, 8);
  const HardwareProfile full = default_profile(c.device);
  HardwareProfile half = full;
  half.gemm_efficiency.value /= 2;
  const int train = g.mfc_index("actor_train");
  int checked = 0;
  for (int first : {0, 8})
    for (int dp : {1, 2, 4})
      for (int tp : {1, 2, 4})
        for (int pp : {1, 2})
          for (int mb : {1, 2, 4}) {
            if (first + dp * tp * pp > 16) continue;
            const MfcAssignment a = assign("actor_train", first, dp, tp, pp, mb);
            const double t_full = estimate_call(g, c, full, train, a).time_s;
            const double t_half = estimate_call(g, c, half, train, a).time_s;
            EXPECT_GT(t_half, t_full) << to_string(a.strategy);
            ++checked;
          }
  EXPECT_EQ(checked, 93);  // 17 meshes of up to 16 devices from device 0, 14 of up to 8 from device 8, x 3
}

TEST(CallCost, CpuWorkersBeyondTheCoresShareThem) {
  const DataflowGraph g = make_graph("ppo", "llama-tiny", 32, 4, 3, 2);
  const Cluster c = make_cluster(1, 4, "cpu-gloo");
  HardwareProfile cores2 = default_profile(c.device), cores4 = cores2;
  ASSERT_EQ(cores2.compute_slots_per_node.value, 2);
  cores4.compute_slots_per_node.value = 4;
  const int train = g.mfc_index("actor_train");
  // The node's 4 workers on 2 cores: a call runs twice as long as on 4 cores, on 4 ranks or on 2 (the other
  // two workers compute other calls, or poll, at the same time). Without message latency that is all.
  for (HardwareProfile* p : {&cores2, &cores4})
    p->intra_node_latency_s.value = p->oversubscribed_wait_s.value = 1e-30;
  const auto four = assign("actor_train", 0, 4, 1, 1), two = assign("actor_train", 0, 2, 1, 1);
  EXPECT_NEAR(estimate_call(g, c, cores2, train, four).time_s,
              2 * estimate_call(g, c, cores4, train, four).time_s, 1e-9);
  EXPECT_NEAR(estimate_call(g, c, cores2, train, two).time_s,
              2 * estimate_call(g, c, cores4, train, two).time_s, 1e-9);
  // Accelerators do not share.
  EXPECT_GE(default_profile(builtin_device("h100-sxm", "d")).compute_slots_per_node.value, 1e6);
}

// The collectives of ref_inf on a node of 4 CPU workers and 2 cores, latency only (free bandwidth).
struct TpMessagesOnTwoCores {
  const DataflowGraph g = make_graph("ppo", "llama-tiny", 32, 4, 3, 2);
  const Cluster c = make_cluster(1, 4, "cpu-gloo");
  HardwareProfile p = default_profile(c.device);
  const int inf = g.mfc_index("ref_inf");
  const MfcAssignment pair = assign("ref_inf", 0, 1, 2, 1), both_pairs = assign("ref_inf", 0, 2, 2, 1);
  TpMessagesOnTwoCores() { p.intra_node_bandwidth.value = 1e30; }
  double comm(const MfcAssignment& a, double busy) const { return estimate_call(g, c, p, inf, a, busy).comm_s; }
};

TEST(CallCost, MessagesWaitLongerTheMoreRanksShareTheCores) {
  TpMessagesOnTwoCores t;
  t.p.oversubscribed_wait_s.value = 0;
  // Its own 2 ranks fit the 2 cores; 2 more busy ranks beside it make each message wait twice as long, as do
  // its own 4 ranks (per rank the same collectives, on half the rows).
  EXPECT_NEAR(t.comm(t.pair, 4), 2 * t.comm(t.pair, 0), 1e-12);
  EXPECT_NEAR(t.comm(t.pair, 3), 1.5 * t.comm(t.pair, 0), 1e-12);
  EXPECT_NEAR(t.comm(t.both_pairs, 0), 2 * t.comm(t.pair, 0), 1e-12);
  EXPECT_NEAR(t.comm(t.both_pairs, 4), t.comm(t.both_pairs, 0), 1e-12);
  // Accelerators never wait for a core.
  const Cluster gpus = make_cluster(1, 4);
  const HardwareProfile h = default_profile(gpus.device);
  EXPECT_EQ(estimate_call(t.g, gpus, h, t.inf, t.pair, 4).time_s,
            estimate_call(t.g, gpus, h, t.inf, t.pair, 0).time_s);
}

// Where more of a call's ranks exchange the same messages at once than the node has cores, each message
// also waits oversubscribed_wait_s per unit of that oversubscription: the tp collectives of two tp groups
// side by side on 2 cores, not those of one group beside other busy ranks, unless the node's idle workers
// take part of the cores too.
TEST(CallCost, LockstepRanksBeyondTheCoresWaitPerMessage) {
  TpMessagesOnTwoCores t;
  t.p.idle_worker_load.value = 0;
  auto comm = [&](const MfcAssignment& a, double busy, double wait) {
    t.p.oversubscribed_wait_s.value = wait;
    return t.comm(a, busy);
  };
  const double latency = t.p.intra_node_latency_s.value;
  // One tp group: no wait, busy ranks beside it or not.
  EXPECT_EQ(comm(t.pair, 4, 3 * latency), comm(t.pair, 4, 0));
  EXPECT_EQ(comm(t.pair, 0, 3 * latency), comm(t.pair, 0, 0));
  // Two tp groups in lockstep on 2 cores: (4 / 2 - 1) x 3 latencies more per message, on top of each
  // message's 2 latencies (the node's 4 busy ranks): 5 latencies where there were 2.
  EXPECT_NEAR(comm(t.both_pairs, 0, 3 * latency), 2.5 * comm(t.both_pairs, 0, 0), 1e-12);
  // Beside 2 idle workers taking half a core each, one tp group's 2 ranks load the 2 cores as 3 would:
  // (3 / 2 - 1) x 3 latencies more per message, on top of its 1 latency.
  t.p.idle_worker_load.value = 0.5;
  EXPECT_NEAR(comm(t.pair, 0, 3 * latency), 2.5 * comm(t.pair, 0, 0), 1e-12);
  // On 4 cores nobody waits.
  t.p.compute_slots_per_node.value = 4;
  EXPECT_EQ(comm(t.both_pairs, 0, 3 * latency), comm(t.both_pairs, 0, 0));
  // A pipeline hand-off is one pair's exchange: two replicas of 2 stages on 2 cores do not wait.
  t.p.compute_slots_per_node.value = 2;
  t.p.idle_worker_load.value = 0;
  const MfcAssignment two_pipelines = assign("ref_inf", 0, 2, 1, 2, 4);
  EXPECT_EQ(comm(two_pipelines, 0, 3 * latency), comm(two_pipelines, 0, 0));
}

// A pipeline's stages idle in its bubble, and an idle stage leaves its core to the others: with one
// micro-batch, one of a replica's 2 stages computes at a time, so 4 ranks on 2 cores run as 2 would.
TEST(CallCost, APipelineLoadsTheCoresOutsideItsBubbleOnly) {
  TpMessagesOnTwoCores t;
  t.p.idle_worker_load.value = 0;
  t.p.oversubscribed_wait_s.value = 0;
  HardwareProfile four_cores = t.p;
  four_cores.compute_slots_per_node.value = 4;
  auto estimate = [&](const HardwareProfile& p, int micro_batches) {
    return estimate_call(t.g, t.c, p, t.inf, assign("ref_inf", 0, 2, 1, 2, micro_batches), 4);
  };
  EXPECT_NEAR(estimate(t.p, 1).time_s, estimate(four_cores, 1).time_s, 1e-12);
  // 16 micro-batches keep the stages busy 16 of 17 slots: a load of 4 x 16 / 17 ranks on 2 cores.
  EXPECT_NEAR(estimate(t.p, 16).compute_s, 64.0 / 34.0 * estimate(four_cores, 16).compute_s, 1e-12);
}

// The bubble frees the cores over the passes only: every rank runs the optimizer steps at once, so their
// part (here the per-step overhead alone) is priced at the node's full load of 4 ranks on 2 cores.
TEST(CallCost, EveryRankRunsTheOptimizerStepsAtOnce) {
  TpMessagesOnTwoCores t;
  t.p.idle_worker_load.value = 0;
  const int train = t.g.mfc_index("actor_train");
  const std::vector<std::string> groups = calibration_groups();
  const size_t step = size_t(std::find(groups.begin(), groups.end(), "step") - groups.begin());
  const CallMeasurement call{train, assign("actor_train", 0, 2, 1, 2, 1), 1.0, 1.0, 4};
  const double part = call_time_parts(t.g, t.c, t.p, {call})[0][step];
  EXPECT_NEAR(part, 2.0 * double(t.g.mfcs[train].train_steps()) * t.p.step_overhead_s.value, 1e-15);
}

TEST(CallCost, GradientAllReduceAcrossNodesCostsMore) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 512, 512);
  const Cluster c = make_cluster(2, 8);
  const HardwareProfile p = default_profile(c.device);
  const int train = g.mfc_index("actor_train");
  // dp 2 x tp 8: the dp group crosses the node boundary in the first case only.
  const CallEstimate across = estimate_call(g, c, p, train, assign("actor_train", 0, 2, 8, 1));
  const CallEstimate within =
      estimate_call(g, make_cluster(1, 16), p, train, assign("actor_train", 0, 2, 8, 1));
  EXPECT_GT(across.comm_s, within.comm_s);
  EXPECT_EQ(across.compute_s, within.compute_s);
}

// A serving engine's replica of tp 8 over 2 nodes of 4 (vLLM's NCCL all-reduces through the NIC) against
// the same replica inside a node of 8: every tp collective of the prefill and of each decoding step (the
// layers' two all-reduces, the embedding's, the logits gathered and the tokens sent) is priced on the
// inter-node link in the first case and on the intra-node link in the second, the same bytes and messages on
// each. With no latency or overhead, a collective's time is its bytes over the link's bandwidth, so comm_s x
// bandwidth is the same in both; the compute and the memory per rank (tp shards) do not change.
TEST(CallCost, AGenerationTpGroupAcrossNodesCollectivesOnTheInterNodeLink) {
  const DataflowGraph g = make_graph("grpo", "llama2-7b", 8, 64, 16);
  HardwareProfile p = default_profile(builtin_device("h100-sxm", "device"));
  for (Coefficient* c : {&p.intra_node_latency_s, &p.inter_node_latency_s, &p.collective_overhead_s})
    c->value = 0;
  p.intra_node_bandwidth = Coefficient{400e9, "test"};
  p.inter_node_bandwidth = Coefficient{50e9, "test"};
  const int gen = g.mfc_index("actor_gen");
  const MfcAssignment a = assign("actor_gen", 0, 1, 8, 1);
  const CallEstimate across = estimate_call(g, make_cluster(2, 4), p, gen, a);
  const CallEstimate within = estimate_call(g, make_cluster(1, 8), p, gen, a);
  ASSERT_GT(within.comm_s, 0);
  EXPECT_NEAR(across.comm_s * 50e9, within.comm_s * 400e9, 1e-9 * within.comm_s * 400e9);
  EXPECT_EQ(across.compute_s, within.compute_s);
  EXPECT_EQ(across.memory.total(), within.memory.total());
  // By hand: a forward of T tokens, H of them through the head, all-reduces T x 4096 bf16 activations twice
  // per layer (32 layers) and once at the embedding, a ring over 8 ranks moving 2 x 7/8 of them, then gathers
  // H rows of 32,000 fp32 logits and sends H int64 tokens. The prefill is one forward of the n prompts'
  // tokens, each of the gen_len decoding steps one of a token per sequence.
  const Mfc& m = g.mfcs[size_t(gen)];
  auto forward_bytes = [](double tokens, double head) {
    return (2 * 32 + 1) * (2.0 * 7 / 8) * tokens * 4096 * 2 + head * 32000 * 4 + head * 8;
  };
  const double n = double(m.n_seqs);
  const double bytes = forward_bytes(n * double(m.prompt_len), n) + double(m.gen_len) * forward_bytes(n, n);
  EXPECT_NEAR(across.comm_s, bytes / 50e9, 1e-9 * across.comm_s);
  // tp 4 inside a node of 4 (dp 2 over the 2 nodes) prices its tp collectives on the intra-node link.
  const MfcAssignment b = assign("actor_gen", 0, 2, 4, 1);
  const CallEstimate d2t4 = estimate_call(g, make_cluster(2, 4), p, gen, b);
  EXPECT_EQ(d2t4.comm_s, estimate_call(g, make_cluster(1, 8), p, gen, b).comm_s);
}

TEST(CallCost, PipelineHandOffsAcrossNodesCostMore) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 512, 512);
  const HardwareProfile p = default_profile(builtin_device("h100-sxm", "device"));
  const int train = g.mfc_index("actor_train");
  // d1t4p4 on 16 devices: stages 1 and 2 meet at the node boundary of a 2 x 8 cluster.
  const MfcAssignment a = assign("actor_train", 0, 1, 4, 4, 4);
  const CallEstimate across = estimate_call(g, make_cluster(2, 8), p, train, a);
  const CallEstimate within = estimate_call(g, make_cluster(1, 16), p, train, a);
  EXPECT_GT(across.comm_s, within.comm_s);
  EXPECT_EQ(across.compute_s, within.compute_s);
  // Without pipeline parallelism (and a dp group inside a node) the same mesh costs the same either way.
  const MfcAssignment b = assign("actor_train", 0, 2, 4, 1, 4);
  EXPECT_EQ(estimate_call(g, make_cluster(1, 8), p, train, b).time_s,
            estimate_call(g, make_cluster(1, 16), p, train, b).time_s);
}

}  // namespace
}  // namespace realign
