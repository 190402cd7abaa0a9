#include "cost/memory_model.h"

#include <gtest/gtest.h>

#include "cost/call_cost.h"
#include "cost/fixtures.h"

namespace realign {
namespace {

using testing::make_graph;

// LLaMA-2-7B by hand: h = 4096, 32 layers, 32 heads (no GQA), SwiGLU intermediate 11008, vocab 32000, untied.
constexpr int64_t kH = 4096, kL = 32, kI = 11008, kV = 32000;
constexpr int64_t kAttention = 4 * kH * kH;  // q, k, v, o
constexpr int64_t kMlp = 3 * kH * kI;        // gate, up, down
constexpr int64_t kNorms = 2 * kH;           // two RMSNorms per layer
constexpr int64_t kLayer = kAttention + kMlp + kNorms;
constexpr int64_t kTotal = kL * kLayer + kV * kH /*embed*/ + kV * kH /*lm_head*/ + kH /*final norm*/;
static_assert(kTotal == 6738415616, "LLaMA-2-7B has 6,738,415,616 parameters");

TEST(MemoryModel, Llama7bParameterCountAndShards) {
  const ModelSpec spec = builtin_model("llama2-7b");
  EXPECT_EQ(spec.total_params(), kTotal);
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  EXPECT_EQ(shard_sizes(params, kL, 1, 1).max(), kTotal);
  // tp = 2: every matrix halves, the norms (replicated) do not.
  const int64_t replicated = kL * kNorms + kH;
  const ShardSizes tp2 = shard_sizes(params, kL, 2, 1);
  EXPECT_EQ(tp2.at(0, 0), (kTotal - replicated) / 2 + replicated);
  EXPECT_EQ(tp2.at(0, 1), (kTotal - replicated) / 2 + replicated);
  // pp = 2: stage 0 has the embedding and layers 0-15, stage 1 layers 16-31, the final norm and the head.
  const ShardSizes pp2 = shard_sizes(params, kL, 1, 2);
  EXPECT_EQ(pp2.at(0, 0), kV * kH + 16 * kLayer);
  EXPECT_EQ(pp2.at(1, 0), 16 * kLayer + kH + kV * kH);
}

TEST(MemoryModel, Llama7bWeightsTrainStateAndKvCache) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 8, 128, 128);
  const ModelRole& actor = g.model(Role::kActor);
  const auto params = model_params(actor.spec, actor.head);
  const ShardSizes one = shard_sizes(params, kL, 1, 1);
  const Mfc& gen = g.mfcs[size_t(g.mfc_index("actor_gen"))];
  const Mfc& train = g.mfcs[size_t(g.mfc_index("actor_train"))];

  const MemoryBreakdown gm = call_memory(actor, gen, Strategy{1, 1, 1, 1}, one);
  EXPECT_EQ(gm.weights, 2.0 * kTotal);  // bf16: 13,476,831,232 bytes
  EXPECT_EQ(gm.gradients, 0);
  EXPECT_EQ(gm.optimizer, 0);
  // KV cache: 2 (K and V) x 32 layers x 32 KV heads x 128 head_dim x 2 bytes = 512 KiB per token,
  // x 8 sequences x 256 tokens = 1 GiB.
  EXPECT_EQ(gm.kv_cache, 2.0 * 32 * 32 * 128 * 2 * 8 * 256);
  EXPECT_EQ(gm.kv_cache, 1024.0 * 1024 * 1024);
  // dp = 2 halves the sequences per rank, tp = 2 halves the KV heads per device.
  EXPECT_EQ(call_memory(actor, gen, Strategy{2, 1, 1, 1}, one).kv_cache, gm.kv_cache / 2);
  EXPECT_EQ(call_memory(actor, gen, Strategy{1, 2, 1, 1}, shard_sizes(params, kL, 2, 1)).kv_cache,
            gm.kv_cache / 2);
  // Micro-batches without a pipeline generate one after another (waves): one holds its cache at a time. A
  // pipeline keeps every micro-batch's cache in flight.
  EXPECT_EQ(call_memory(actor, gen, Strategy{1, 1, 1, 4}, one).kv_cache, gm.kv_cache / 4);
  const auto stages = stage_memory(actor, gen, Strategy{1, 1, 2, 4}, shard_sizes(params, kL, 1, 2));
  EXPECT_EQ(stages[0].kv_cache + stages[1].kv_cache, gm.kv_cache);

  // Mixed-precision Adam: 2 (bf16 weights) + 2 (bf16 grads) + 4 + 4 + 4 (fp32 master, m, v) = 16 bytes/param.
  const MemoryBreakdown tm = call_memory(actor, train, Strategy{1, 1, 1, 1}, one);
  EXPECT_EQ(tm.weights, 2.0 * kTotal);
  EXPECT_EQ(tm.gradients, 2.0 * kTotal);
  EXPECT_EQ(tm.optimizer, 12.0 * kTotal);
  EXPECT_EQ(tm.weights + tm.gradients + tm.optimizer, 107814649856.0);
  // Activations: Megatron's s*b*h*(10 + 24/t) per layer, one micro-batch of 8 x 256 tokens in flight.
  EXPECT_EQ(tm.activations, 32.0 * (8 * 256) * kH * (10 + 24));
  // Logits and their gradient in fp32, 2048 tokens (under the 4096-token chunk) x 32000.
  EXPECT_EQ(tm.logits, 2.0 * 2048 * 32000 * 4);
}

// A serving engine's sliding-window layer caches at most its window (Gemma 3 1B: 26 layers, the 22 local ones
// over 512 tokens; one KV head of 256: 2 x 256 x 2 bytes = 1 KiB per token and layer), as vLLM's hybrid KV
// cache manager allocates it; a global layer caches the whole sequence. realign's runtime (static batching)
// allocates every layer's cache for the whole sequence.
TEST(MemoryModel, SlidingWindowLayersCacheAtMostTheirWindow) {
  const DataflowGraph g = make_graph("ppo", "gemma3-1b", 8, 256, 1792);  // 2,048 tokens a sequence
  const ModelRole& actor = g.model(Role::kActor);
  const auto params = model_params(actor.spec, actor.head);
  Mfc gen = g.mfcs[size_t(g.mfc_index("actor_gen"))];
  ASSERT_EQ(gen.generation.batching, Batching::kStatic);
  const ShardSizes one = shard_sizes(params, 26, 1, 1);
  EXPECT_EQ(call_memory(actor, gen, Strategy{1, 1, 1, 1}, one).kv_cache, 1024.0 * 26 * 2048 * 8);
  gen.generation.batching = Batching::kContinuous;
  const MemoryBreakdown gm = call_memory(actor, gen, Strategy{1, 1, 1, 1}, one);
  EXPECT_EQ(gm.kv_cache, 1024.0 * (4 * 2048 + 22 * 512) * 8);
  const auto stages = stage_memory(actor, gen, Strategy{1, 1, 2, 4}, shard_sizes(params, 26, 1, 2));
  EXPECT_EQ(stages[0].kv_cache + stages[1].kv_cache, gm.kv_cache);
}

TEST(MemoryModel, MoreTensorParallelismReducesPerDeviceWeights) {
  const DataflowGraph g = make_graph("ppo", "llama2-7b", 64, 256, 256);
  const ModelRole& actor = g.model(Role::kActor);
  const auto params = model_params(actor.spec, actor.head);
  const Mfc& train = g.mfcs[size_t(g.mfc_index("actor_train"))];
  double previous_weights = 1e300, previous_total = 1e300;
  for (int tp : {1, 2, 4, 8}) {
    const MemoryBreakdown m =
        call_memory(actor, train, Strategy{1, tp, 1, 1}, shard_sizes(params, kL, tp, 1));
    EXPECT_LT(m.weights, previous_weights) << "tp " << tp;
    EXPECT_LT(m.total(), previous_total) << "tp " << tp;
    previous_weights = m.weights;
    previous_total = m.total();
  }
}

TEST(MemoryModel, OneFOneBKeepsUpToPpMicroBatchesInFlight) {
  const DataflowGraph g = make_graph("sft", "llama2-7b", 64, 512, 0);
  const ModelRole& actor = g.model(Role::kActor);
  const auto params = model_params(actor.spec, actor.head);
  const Mfc& train = g.mfcs[0];
  const ShardSizes pp4 = shard_sizes(params, kL, 1, 4);
  // Stage 0 holds min(pp, micro_batches) micro-batches of 8 layers each.
  const double per_layer_mb8 = layer_activation_bytes(actor.spec, 8.0 * 512, 1);
  EXPECT_EQ(call_memory(actor, train, Strategy{1, 1, 4, 8}, pp4).activations, 4 * 8 * per_layer_mb8);
  const double per_layer_mb2 = layer_activation_bytes(actor.spec, 32.0 * 512, 1);
  EXPECT_EQ(call_memory(actor, train, Strategy{1, 1, 4, 2}, pp4).activations, 2 * 8 * per_layer_mb2);
}

}  // namespace
}  // namespace realign
