#include "cost/transfer_cost.h"

#include <gtest/gtest.h>

#include <numeric>

#include "cost/fixtures.h"

namespace realign {
namespace {

using testing::make_cluster;

// llama-tiny: 2 layers, hidden 64, 4 heads of 16 (q: 64 rows), 2 KV heads (k, v: 32 rows), SwiGLU 176,
// vocab 256, untied LM head.
constexpr double kH = 64, kQ = 64, kKV = 32, kI = 176, kV = 256, kBf16 = 2;
constexpr double kLayer = kQ * kH + 2 * kKV * kH + kH * kQ + 3 * kI * kH + 2 * kH;

struct Tiny {
  ModelSpec spec = builtin_model("llama-tiny");
  std::vector<ParamInfo> params = model_params(spec, HeadKind::kLanguageModel);
  Cluster cluster = make_cluster(2, 4);
  HardwareProfile profile = default_profile(cluster.device);
  TransferCost cost(const std::string& src, const std::string& dst) const {
    return realloc_cost(params, spec.n_layers, parse_layout(src), parse_layout(dst), cluster, profile);
  }
  std::vector<double> inbound(const std::string& src, const std::string& dst) const {
    return realloc_inbound_bytes(params, spec.n_layers, parse_layout(src), parse_layout(dst));
  }
};

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(ReallocCost, HandCheckedLlamaTinyShape) {
  const Tiny t;
  EXPECT_EQ(double(t.spec.params_per_layer()), kLayer);
  EXPECT_EQ(double(t.spec.total_params()), 2 * kLayer + 2 * kV * kH + kH);
}

TEST(ReallocCost, IdenticalLayoutsMoveNothing) {
  const Tiny t;
  for (const char* l : {"d1t1p1", "d2t2p1@4", "d1t2p2", "d4t1p2"}) {
    const TransferCost c = t.cost(l, l);
    EXPECT_EQ(c.bytes, 0) << l;
    EXPECT_EQ(c.time_s, 0) << l;
    EXPECT_EQ(sum(t.inbound(l, l)), 0) << l;
  }
}

TEST(ReallocCost, TensorParallelOneToTwo) {
  const Tiny t;
  // Device 0 keeps its full copy (it holds rank 0's half already); device 1 receives rank 1's shard: half of
  // every split matrix (q: 2 of 4 heads, k and v: 1 of 2 KV heads, o's columns, gate/up rows, down's columns,
  // embedding and LM head rows) and the whole of every replicated norm.
  const double layer_rank1 = (kQ / 2) * kH + 2 * (kKV / 2) * kH + kH * (kQ / 2) + 3 * (kI / 2) * kH + 2 * kH;
  const double rank1 = 2 * layer_rank1 + (kV / 2) * kH /*embed*/ + kH /*final norm*/ + (kV / 2) * kH /*head*/;
  EXPECT_EQ(rank1, 62784);
  const auto in = t.inbound("d1t1p1", "d1t2p1");
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], 0);
  EXPECT_EQ(in[1], rank1 * kBf16);
  const TransferCost c = t.cost("d1t1p1", "d1t2p1");
  EXPECT_EQ(c.bytes, rank1 * kBf16);
  EXPECT_FALSE(c.crosses_nodes);
  EXPECT_NEAR(c.time_s, t.profile.intra_node_latency_s.value + c.bytes / t.profile.intra_node_bandwidth.value,
              1e-15);
  // The reverse: device 0 lacks exactly rank 1's half of the split tensors (norms it already has).
  const auto back = t.inbound("d1t2p1", "d1t1p1");
  EXPECT_EQ(back[0], (rank1 - 2 * 2 * kH - kH) * kBf16);
}

TEST(ReallocCost, PipelineTwoToOne) {
  const Tiny t;
  // d1t1p2: device 0 holds the embedding and layer 0, device 1 layer 1, the final norm and the LM head.
  // d1t1p1 on device 0: it lacks layer 1, the final norm and the head.
  const auto in = t.inbound("d1t1p2", "d1t1p1");
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0], (kLayer + kH + kV * kH) * kBf16);
  // On device 1 instead, it lacks the embedding and layer 0.
  EXPECT_EQ(t.inbound("d1t1p2", "d1t1p1@1")[0], (kV * kH + kLayer) * kBf16);
}

TEST(ReallocCost, DataParallelChanges) {
  const Tiny t;
  const double full = double(t.spec.total_params()) * kBf16;
  // dp 1 -> 2: the new replica (device 1) receives the whole model.
  const auto grow = t.inbound("d1t1p1", "d2t1p1");
  EXPECT_EQ(grow[0], 0);
  EXPECT_EQ(grow[1], full);
  // dp 2 -> 1 on either of the old replicas: nothing moves.
  EXPECT_EQ(t.cost("d2t1p1", "d1t1p1").bytes, 0);
  EXPECT_EQ(t.cost("d2t1p1", "d1t1p1@1").bytes, 0);
  // d2t2p1 -> d4t1p1: each device already holds its tp half and needs the other half of the split tensors.
  const double split = full - (2 * 2 * kH + kH) * kBf16;
  const auto in = t.inbound("d2t2p1", "d4t1p1");
  for (double b : in) EXPECT_EQ(b, split / 2);
}

TEST(ReallocCost, CrossNodeMovesAreSlower) {
  const Tiny t;
  const TransferCost near = t.cost("d1t1p1", "d1t1p1@1");  // same node
  const TransferCost far = t.cost("d1t1p1", "d1t1p1@4");   // next node
  EXPECT_EQ(near.bytes, far.bytes);
  EXPECT_FALSE(near.crosses_nodes);
  EXPECT_TRUE(far.crosses_nodes);
  EXPECT_GT(far.time_s, near.time_s);
  // Senders share the load: one source sending to 4 replicas is slower than 4 sources to 4 destinations.
  const TransferCost fan = t.cost("d1t1p1", "d4t1p1@4");
  const TransferCost parallel = t.cost("d4t1p1", "d4t1p1@4");
  EXPECT_EQ(fan.bytes, parallel.bytes);
  EXPECT_EQ(fan.max_outbound, 4 * parallel.max_outbound);
  EXPECT_GT(fan.time_s, parallel.time_s);
}

TEST(DataMoveCost, SameSamplesOnSameDevicesAreFree) {
  const Tiny t;
  EXPECT_EQ(
      data_move_cost(64, 1000, parse_layout("d2t1p1"), parse_layout("d2t1p1"), t.cluster, t.profile).bytes,
      0);
  // Different tp/pp but the same dp split over the same devices' dp groups still holds the same samples:
  // d2t2p1 puts samples 0-31 on devices 0,1 and 32-63 on devices 2,3; d2t1p2 puts 0-31 on 0,2 and 32-63 on
  // 1,3, so devices 1 and 2 each lack their 32 sequences.
  const TransferCost c =
      data_move_cost(64, 1000, parse_layout("d2t2p1"), parse_layout("d2t1p2"), t.cluster, t.profile);
  EXPECT_EQ(c.bytes, 2 * 32 * 1000);
  // Disjoint devices: every consumer device receives its dp rank's share.
  const TransferCost d =
      data_move_cost(64, 1000, parse_layout("d2t1p1"), parse_layout("d1t1p1@4"), t.cluster, t.profile);
  EXPECT_EQ(d.bytes, 64 * 1000);
  EXPECT_TRUE(d.crosses_nodes);
  EXPECT_GT(d.time_s, 0);
}

// A train call's mini-batches are segments of the batch, each dp rank taking its share of every segment (as
// the runtime moves rows): on the producer's own layout, d2t1p1's device 0 holds sequences 0-31 and needs
// 0-15 and 32-47, device 1 holds 32-63 and needs 16-31 and 48-63, so each lacks 16.
TEST(DataMoveCost, MiniBatchSegmentsMoveRowsEvenOnTheSameLayout) {
  const Tiny t;
  const Layout l = parse_layout("d2t1p1");
  EXPECT_EQ(data_move_cost(64, 1000, l, l, t.cluster, t.profile, 2).bytes, 2 * 16 * 1000);
  EXPECT_EQ(data_move_cost(64, 1000, l, l, t.cluster, t.profile, 1).bytes, 0);
  // One device holds every sequence whatever the segments.
  EXPECT_EQ(
      data_move_cost(64, 1000, parse_layout("d1t2p1"), parse_layout("d1t1p1"), t.cluster, t.profile, 4).bytes,
      0);
}

}  // namespace
}  // namespace realign
