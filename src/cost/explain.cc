#include "cost/explain.h"

#include <cstdio>
#include <map>

#include "cost/call_cost.h"
#include "cost/memory_model.h"

namespace realign {

std::vector<ExplainLine> explain(const HardwareProfile& p) {
  static const std::map<std::string, std::string> units = {
      {"peak_flops", "FLOP/s"},
      {"memory_bandwidth", "bytes/s"},
      {"memory_bytes", "bytes"},
      {"gemm_efficiency", "fraction of peak_flops"},
      {"gemm_depth_efficiency", "fraction of gemm_efficiency, by a GEMM's depth K after the tp split"},
      {"attention_efficiency", "fraction of peak_flops"},
      {"decode_bandwidth_efficiency", "fraction of memory_bandwidth (decode, optimizer step)"},
      {"usable_memory_fraction", "fraction of memory_bytes"},
      {"pass_efficiency", "fraction of the kernels' rates over a batched pass (not decoding)"},
      {"layer_launch_overhead_s", "seconds per layer forward"},
      {"decode_step_overhead_s", "seconds per decoding step of a micro-batch"},
      {"call_overhead_s", "seconds per call"},
      {"step_overhead_s", "seconds per optimizer step"},
      {"iteration_overhead_s", "seconds per iteration, outside the calls"},
      {"compute_slots_per_node", "ranks of a node computing at full speed at once"},
      {"idle_worker_load", "fraction of a compute slot a worker takes between its calls"},
      {"intra_node_latency_s", "seconds per message"},
      {"intra_node_bandwidth", "bytes/s per device"},
      {"intra_node_alltoall_bandwidth", "bytes/s per device, all-to-all"},
      {"inter_node_latency_s", "seconds per message"},
      {"inter_node_bandwidth", "bytes/s per device"},
      {"collective_overhead_s", "seconds per collective or message, issued by the host"},
      {"oversubscribed_wait_s",
       "seconds per message, times (the call's ranks exchanging it at once + the idle workers' load) / "
       "compute_slots_per_node - 1, when above 0"},
      {"host_device_bandwidth", "bytes/s per device"}};
  std::vector<ExplainLine> out;
  for (const auto& [name, c] : p.coefficients()) {
    std::string curve;
    for (const auto& [x, y] : c->points) {
      char point[64];
      std::snprintf(point, sizeof point, "%s%.4g -> %.4g", curve.empty() ? "" : ", ", x, y);
      curve += point;
    }
    if (!curve.empty()) curve = "over " + c->of + ": " + curve;
    out.push_back(ExplainLine{name, c->value, units.at(name), c->source, curve});
  }
  const std::string mp = "memory model: mixed-precision Adam (bf16 weights and gradients, fp32 master, m, v)";
  out.push_back({"weight_bytes_per_param", kWeightBytesPerParam, "bytes", mp});
  out.push_back({"gradient_bytes_per_param", kGradBytesPerParam, "bytes", mp});
  out.push_back({"optimizer_bytes_per_param", kOptimizerBytesPerParam, "bytes", mp});
  out.push_back(
      {"optimizer_step_bytes_per_param", optimizer_step_bytes(Strategy{}), "bytes, 8 + 24/dp with zero1",
       "time model: a memory-bound pass per step: the clipping norm and Adam read the bf16 gradient "
       "(2 + 2), Adam reads and writes fp32 master, m, v (24), writes the bf16 weight (2), the "
       "gradient is zeroed (2) (Megatron-LM's optimizer step; ZeRO-1 updates a 1/dp share)"});
  out.push_back({"zero1_optimizer_bytes_per_param", kOptimizerBytesPerParam, "bytes / dp",
                 "memory model: a train call with zero1 shards fp32 master, m and v over its dp ranks (ZeRO "
                 "stage 1, Rajbhandari et al. 2020; Megatron's distributed optimizer); its gradient "
                 "all-reduce becomes a reduce-scatter plus a weight all-gather, the same bytes"});
  out.push_back({"recompute_forwards", 1, "extra forward per micro-batch",
                 "time and memory model: a train call with recompute runs each layer's forward again "
                 "before its backward (train = 4x forward FLOPs, as ReaL counts them) and keeps only "
                 "each layer's bf16 input, 2 bytes per token and hidden unit (Korthikanti et al. 2022)"});
  out.push_back({"generation_steps", 1, "stretches of steps at the batch still running",
                 "time model (cost/decode_segments.h): the response lengths under batch.gen_len_max "
                 "(fixed at gen_len unless a cap, quantiles or observed lengths are given); a replica holding "
                 "the batch's expected longest sample decodes it with static batching (realign's runtime, a "
                 "cpu cluster: each wave to its longest sample, finished rows padded) or continuous batching "
                 "(a GPU cluster: kept full from the queue, then shrinking as samples end), or with partial "
                 "rollouts its tokens at a full batch; each step reads the weights and the KV cache at the "
                 "stretch's mean context and pays decode_step_overhead_s per micro-batch"});
  out.push_back(
      {"activation_bytes_per_token_hidden", 10, "bytes per token and hidden unit, + 24/tp",
       "memory model: Megatron per-layer activations s*b*h*(10 + 24/t) (Korthikanti et al. 2022), "
       "FlashAttention (no s^2 term), no recompute, 1F1B keeps min(pp - stage, micro_batches) in flight"});
  out.push_back({"logit_chunk_tokens", double(kLogitChunkTokens), "tokens",
                 "memory model: fp32 logits computed in chunks of this many tokens"});
  out.push_back(
      {"backward_flops_factor", 2, "x forward",
       "time model: backward = 2x forward FLOPs (train = 3x forward), 2 TP all-reduces per layer each way, "
       "plus the vocabulary-parallel embedding's and head's collectives"});
  out.push_back(
      {"latency_contention", 1, "x busy ranks of the node / compute_slots_per_node, when above 1",
       "time model: workers sharing compute slots (CPU cores) wait for their peers to be scheduled; "
       "the busy ranks are the call's own (a pipeline's times its busy share, outside its bubble) and, "
       "from a first simulation pass, those of calls beside it"});
  return out;
}

std::string format_explain(const std::vector<ExplainLine>& lines) {
  std::string out;
  for (const auto& l : lines) {
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", l.value);
    out += l.name + " = " + value + " (" + l.unit + ") -- " + l.source + "\n";
    if (!l.curve.empty()) out += "    " + l.curve + "\n";
  }
  return out;
}

}  // namespace realign
