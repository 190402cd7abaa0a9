#include "cost/call_cost.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "cost/comm_model.h"
#include "cost/decode_segments.h"
#include "cost/detail/stage_cost.h"
#include "cost/moe_cost.h"

namespace realign {

bool mesh_spans_nodes(const DeviceMesh& mesh, const Cluster& cluster) {
  return cluster.node_of(mesh.first) != cluster.node_of(mesh.end() - 1);
}

namespace {

using detail::add_stage;
using detail::CallContext;
using detail::pipelined_forward;
using detail::pp_handoff_s;
using detail::pp_issue_s;
using detail::stage_backward_comm_s;
using detail::stage_context_parallel_s;
using detail::stage_forward;
using detail::StageCost;

// The passes of a train call over its micro-batches go to `e`, its optimizer steps (the gradient sync and
// the update, on every rank at once) to `steps_e`.
void train_time(const CallContext& c, const Mfc& mfc, CallEstimate& e, CallEstimate& steps_e) {
  // A rank's share of a micro-batch's tokens: 1/cp of each sequence, whose queries still attend over the
  // whole sequence (cost/context_parallel.h).
  const double mb_tokens = double(seqs_per_micro_batch(mfc, c.s)) * double(mfc.seq_len()) / double(c.s.cp);
  const double context = double(mfc.seq_len()) / 2.0;  // causal attention
  // Per slot of 1F1B: forward + backward (2x forward FLOPs, 2 more all-reduces, ~2x the launches), and the
  // activation (forward) and its gradient (backward) crossing each stage boundary. Unlike a forward-only
  // pipeline, 1F1B's steady state is a ping-pong between neighbouring stages (a stage's next backward waits
  // for the gradient its successor computes from the activation it just sent), so both transfers are on the
  // critical path of every slot. (On 4 CPU workers, charging only their issue cost there raised the
  // out-of-sample error of realign validate from 10.3% to 12.9% on average over 8 runs.) Recomputation runs
  // each layer's forward once more, collectives included, before its backward.
  const double forwards = c.s.recompute ? 2.0 : 1.0;
  StageCost fwd, slot;
  for (int stage = 0; stage < c.s.pp; ++stage) {
    const StageCost f = stage_forward(c, stage, mb_tokens, context, mb_tokens);
    StageCost both;
    both.compute = (2.0 + forwards) * f.compute;
    both.comm = forwards * f.comm + stage_backward_comm_s(c, stage, mb_tokens) +
                stage_context_parallel_s(c, stage, mb_tokens, context, true) +
                2.0 * pp_handoff_s(c, mb_tokens);
    both.overhead = (2.0 + forwards) * f.overhead;
    if (both.total() > slot.total()) slot = both, fwd = f;
  }
  const double slots = double(c.s.micro_batches + c.s.pp - 1);
  // The gradient all-reduce over the dp x cp replicas (bf16 gradients of the largest shard; with ZeRO-1 a
  // reduce-scatter of
  // the gradients and an all-gather of the updated weights, the same bytes) and the memory-bound passes of a
  // step (optimizer_step_bytes).
  const double shard = double(c.shards.max());
  // Clipping sums the squared gradient norm over the tp and pp groups (one scalar each). A routed expert's
  // gradient is reduced over the edp ranks holding the same experts instead (plan/expert_parallel.h), and its
  // optimizer state sharded over them with ZeRO-1.
  const double experts = double(c.shards.max_experts());
  const int replicas = c.s.replicas();
  double dp_comm = ring_allreduce_s((shard - experts) * kGradBytesPerParam, replicas, c.dp_link) +
                   ring_allreduce_s(8.0, c.s.tp, c.tp_link) + ring_allreduce_s(8.0, c.s.pp, c.pp_link);
  double optimizer_bytes = (shard - experts) * optimizer_step_bytes(c.s);
  if (experts > 0) {
    const int edp = expert_data_parallel(replicas, c.s.tp, c.s.ep);
    dp_comm += ring_allreduce_s(experts * kGradBytesPerParam, edp, c.dp_link);
    optimizer_bytes += experts * (8.0 + 24.0 / (c.s.zero1 ? double(edp) : 1.0));
  }
  // Scalars summed over dp (over dp x cp with context parallelism, where each rank holds a share of every
  // sequence) (train/train_calls.cc, train/rl_batch.cc), an all-reduce each: every step, the
  // loss's weight (the dp group's token count) before its passes and its loss figures after them; once a call
  // in a PPO-family update, the batch's split into mini-batches (the dp group's row count) and its advantages
  // (whitened or gathered over the dp group), and in a policy update the batch's statistics.
  const double scalar_sum = ring_allreduce_s(8.0, replicas, c.dp_link);
  dp_comm += 2.0 * scalar_sum;
  const double call_sums = mfc.op == MfcOp::kPolicyUpdate ? 3.0 : mfc.op == MfcOp::kValueUpdate ? 2.0 : 0.0;
  const double optimizer = optimizer_bytes / c.mem_rate(optimizer_bytes);
  const double steps = double(mfc.train_steps());
  // A pipelined update of a pair loss (runtime/call_forward.h) first runs a pipelined forward without
  // gradients, which gives the loss's gradient at the outputs (a forward-only pipeline: issued sends, and the
  // first micro-batch's transfers), then 1F1B: one more forward per slot.
  double forward_fill = 0;
  if (c.s.pp > 1 && mfc.pair_loss()) {
    slot.compute += fwd.compute;
    slot.comm += fwd.comm + pp_issue_s(c);
    slot.overhead += fwd.overhead;
    forward_fill = double(c.s.pp - 1) * pp_handoff_s(c, mb_tokens);
  }
  add_stage(e, slot, steps * slots);
  e.comm_s += steps * forward_fill;
  steps_e.comm_s += steps * dp_comm + call_sums * scalar_sum;
  steps_e.compute_s += steps * optimizer;
  steps_e.overhead_s += steps * c.p.step_overhead_s.value;
}

// One decoding step of every stage for a micro-batch of `mb_seqs` sequences at mean context `context`:
// the busiest stage's slot and one micro-batch's cycle through all stages and back.
struct DecodeStep {
  StageCost worst, cycle;
};

// `windowed`: a local layer reads only its window of the cache (a serving engine's paged cache); realign's
// runtime (static batching) attends over every layer's whole cache and masks the window.
DecodeStep decode_step(const CallContext& c, double mb_seqs, double context, bool windowed) {
  const ModelSpec& m = c.model.spec;
  const double stages = double(c.s.pp);
  // Per token, each stage reads its weight shard and its KV cache for every micro-batch (memory-bound), or
  // is bound by its FLOPs when the batch is large.
  const double kv_per_token_layer = m.kv_cache_elements_per_rank(c.s.tp) * kActivationBytes;
  // A decoding step reads only the experts its tokens picked (the ep group's micro-batches route together).
  const double routed_together =
      experts_cut_by_tp(c.s.ep) ? mb_seqs : mb_seqs * double(c.s.ep) / double(c.s.tp);
  const double touched = experts_touched_fraction(m, routed_together);
  const double handoff = pp_handoff_s(c, mb_seqs);
  const double token_send = c.s.pp > 1 ? p2p_s(mb_seqs * 8.0, c.pp_link) : 0.0;
  DecodeStep d;
  for (int stage = 0; stage < c.s.pp; ++stage) {
    const Range range = stage_layers(m.n_layers, stage, c.s.pp);
    StageCost sc = stage_forward(c, stage, mb_seqs, context, mb_seqs, true);
    const double experts = double(c.shards.stage_experts(stage));
    const double weights = double(c.shards.stage_max(stage)) - experts * (1.0 - touched);
    const double kv_tokens =
        windowed ? m.attended_tokens(range.begin, range.end, context) : double(range.size()) * context;
    const double bytes = weights * kWeightBytesPerParam + kv_tokens * kv_per_token_layer * mb_seqs;
    sc.compute = std::max(sc.compute, bytes / c.mem_rate(bytes));
    d.cycle.compute += sc.compute;
    d.cycle.comm += sc.comm;
    d.cycle.overhead += sc.overhead;
    sc.comm += (stage + 1 < c.s.pp ? 1.0 : stages - 1) * pp_issue_s(c);
    if (sc.total() > d.worst.total()) d.worst = sc;
  }
  d.cycle.comm += (stages - 1) * handoff + token_send;
  return d;
}

// Pipelined generation as runtime/pipeline.h runs it: the micro-batches' prefills fill the pipeline
// (micro_batches + pp - 1 slots), then every decoding step takes each micro-batch's token once through every
// stage. A stage's slot is its forward plus issuing its sends (pp_issue_s): the activation (B, 1, H) to the
// next stage, or, on the last stage, the sampled tokens (B int64) to each of the pp - 1 others. One
// micro-batch's step is a cycle through all stages and back (pp forwards, pp - 1 activation hand-offs, the
// token's return to the first stage, each waited for); a step takes the longer of micro_batches slots of the
// busiest stage and that cycle: with fewer micro-batches than stages the cycle paces the step and stages idle
// (the decode bubble). At the end the last stage broadcasts the log-probs (fp32, every row and token) over
// the pp group: a header's length, the header, then the bytes, each along a binomial tree.
void generate_time(const CallContext& c, const Mfc& mfc, CallEstimate& e) {
  const double mb_seqs = double(seqs_per_micro_batch(mfc, c.s));
  const double n_micro = double(c.s.micro_batches), stages = double(c.s.pp);
  // Prefill: compute-bound forward of the prompts; the head runs on each prompt's last position only.
  pipelined_forward(c, e, mb_seqs * double(mfc.prompt_len), double(mfc.prompt_len) / 2.0, mb_seqs);
  double busy = n_micro, slots = n_micro + stages - 1;  // stage slots busy and elapsed (bubble_fraction)
  if (mfc.gen_len > 0) {
    // The decoding steps at the batch sizes the response lengths leave running (decode_segments.h; fixed
    // lengths: every sequence takes all gen_len steps, one segment).
    const std::vector<DecodeSegment> segments =
        decode_segments(mfc.generation, double(mfc.prompt_len), double(mfc.gen_len),
                        seqs_per_dp_rank(mfc, c.s.dp), mfc.n_seqs, c.s.micro_batches,
                        seqs_per_micro_batch(mfc, c.s), c.s.pp > 1);
    for (const DecodeSegment& seg : segments) {
      const DecodeStep step =
          decode_step(c, seg.batch, seg.context, mfc.generation.batching != Batching::kStatic);
      const double n_mb = seg.micro_batches;
      const bool cycle_bound = step.cycle.total() > n_mb * step.worst.total();
      const double before = e.compute_s + e.comm_s + e.overhead_s;
      add_stage(e, cycle_bound ? step.cycle : step.worst, cycle_bound ? seg.steps : seg.steps * n_mb);
      busy += seg.steps * n_mb;
      slots += seg.steps * (cycle_bound ? step.cycle.total() / step.worst.total() : n_mb);
      // Each micro-batch's step ends on the host: sample, check stop tokens, feed the next token back.
      e.overhead_s += seg.steps * n_mb * c.p.decode_step_overhead_s.value;
      if (seg.tail) e.tail_s += e.compute_s + e.comm_s + e.overhead_s - before;
    }
  }
  if (c.s.pp > 1) {
    const double logprob_bytes = mb_seqs * n_micro * double(std::max<int64_t>(mfc.gen_len, 0)) * 4.0;
    e.comm_s += std::ceil(std::log2(stages)) *
                (2.0 * p2p_s(8.0, c.pp_link) + p2p_s(std::max(logprob_bytes, 1.0), c.pp_link));
  }
  e.bubble_fraction = 1.0 - busy / slots;
}

}  // namespace

double optimizer_step_bytes(const Strategy& s) {
  // Reading the bf16 gradient for the clipping norm (2) and for the step (2), reading and writing the fp32
  // master weight, m and v (24; a 1/dp share of them with ZeRO-1), writing the bf16 weight (2) and zeroing
  // the gradient (2).
  return 8.0 + 24.0 / (s.zero1 ? double(s.replicas()) : 1.0);
}

namespace {

// A call's time in two phases: its passes over the micro-batches, where a pipeline's stages idle in its
// bubble, and a train call's optimizer steps, which every rank runs at once.
struct CallPhases {
  CallEstimate passes, steps;
};

// The call's phases where its own ranks keep `own` compute slots busy on average and other calls' ranks
// `others` of the node.
CallPhases estimate_at_load(const ModelRole& model, const Mfc& mfc, const Strategy& s, bool spans_nodes,
                            int devices_per_node, const HardwareProfile& p, const ShardSizes& shards,
                            double own, double others) {
  Link intra = intra_node_link(p), inter = inter_node_link(p), alltoall = intra_node_alltoall_link(p);
  // Workers that share compute slots take turns: a message waits for its peer to be scheduled, the more
  // often the more ranks of the node are busy. (In realign validate on 2 cores and 4 workers, scaling
  // latency alone by this cut the residual of a fit to 360 measured call times by 22%.)
  const double slots = p.compute_slots_per_node.value;
  const double contention = std::max(1.0, (own + others) / slots);
  intra.latency_s *= contention;
  inter.latency_s *= contention;
  alltoall.latency_s *= contention;
  // A tp group stays within a node (strategy_problem) but a serving engine's generation replica over whole
  // nodes. vLLM then all-reduces through NCCL over the NIC (its custom all-reduce turns itself off for a
  // group spanning nodes: vllm/distributed/device_communicators/custom_all_reduce.py, "Custom allreduce is
  // disabled because this process group spans across nodes"), and NCCL's ring through the nodes goes at its
  // inter-node hops' pace, each GPU's share of the NICs: every prefill's and decoding step's tp collectives
  // are priced on the inter-node link, its latency and bandwidth. (vLLM's own pipeline parallelism is not
  // priced.)
  const bool tp_crosses = s.tp > devices_per_node;
  // A dp group lies in a block of dp*tp adjacent devices:
  // it crosses nodes when that block exceeds a node. Pipeline stages are such blocks in a row, so on a mesh
  // spanning nodes some stage boundary is a node boundary, and the slowest hand-off paces the pipeline.
  const bool wide = spans_nodes && s.replicas() * s.tp > devices_per_node;
  // A context-parallel group is cp ranks tp apart (Megatron's order tp, cp, dp, pp): within a node while its
  // tp*cp block fits in one.
  const bool cp_crosses = spans_nodes && s.cp * s.tp > devices_per_node;
  const bool pp_crosses = spans_nodes;
  // The node's load during the call: its busy ranks (the call's own and those of calls beside it) and, in
  // part, the workers running no call (idle_worker_load): they wait for their next call, and waiting is not
  // free. (In realign validate on 2 cores and 4 workers, counting every idle worker whole overestimated the
  // disaggregated preset's train calls, 2 ranks beside 2 idle ones, by 10-47% on seeds 1, 2 and 6.)
  const double busy = std::min(own + others, double(devices_per_node));
  const double idle_load = p.idle_worker_load.value * (double(devices_per_node) - busy);
  // Where more of the call's ranks exchange the same messages at the same moments than the node has slots
  // left beside the idle workers' load, each message also waits for a peer that another rank holds off its
  // slot (HardwareProfile::oversubscribed_wait_s): a stage's tp collectives run in every replica at once (dp
  // * tp ranks), the gradient sync in every stage (all ranks). A pipeline hand-off is one pair's exchange:
  // the replicas' pairs need not meet at the same moments, and in 1F1B a stage waiting for its neighbour
  // leaves the core to it. (Counting the pairs of every replica, 2 dp ranks, overestimated the 1F1B train
  // calls of dp 2 x pp 2 by 1.4x; counting one pair cut the median error of seeds 1-6's 60 plans, fitted
  // together, from 6.5% to 5.0%. Counting the idle workers' load here too had cut it from 7.9% to 6.8%.)
  auto in_lockstep = [&](Link link, int ranks) {
    const double lockstep = double(std::min(ranks, devices_per_node)) + idle_load;
    link.latency_s += p.oversubscribed_wait_s.value * std::max(0.0, lockstep / slots - 1);
    return link;
  };
  const int replicas_stage = s.replicas() * s.tp;
  CallContext c{model,
                s,
                p,
                shards,
                in_lockstep(tp_crosses ? inter : intra, replicas_stage),
                in_lockstep(pp_crosses ? inter : intra, 2),
                in_lockstep(wide ? inter : intra, replicas_stage * s.pp),
                mfc.op,
                in_lockstep(alltoall, replicas_stage),
                inter,
                devices_per_node,
                in_lockstep(cp_crosses ? inter : intra, replicas_stage)};
  CallPhases phases;
  CallEstimate& e = phases.passes;
  const double seq_len = double(mfc.seq_len());
  switch (mfc.kind()) {
    case MfcKind::kGenerate:
      generate_time(c, mfc, e);
      e.flops =
          model.spec.forward_flops(double(mfc.n_seqs) * mfc.prompt_len, mfc.prompt_len / 2.0) +
          model.spec.forward_flops(double(mfc.n_seqs) * mfc.gen_len, mfc.prompt_len + mfc.gen_len / 2.0);
      break;
    case MfcKind::kInference: {
      // A rank's share of a micro-batch's tokens (cp: 1/cp of each sequence).
      const double mb_tokens = double(seqs_per_micro_batch(mfc, s)) * seq_len / double(s.cp);
      pipelined_forward(c, e, mb_tokens, seq_len / 2.0, mb_tokens);
      e.flops = model.spec.forward_flops(double(mfc.n_seqs) * seq_len, seq_len / 2.0);
      e.bubble_fraction = double(s.pp - 1) / double(s.micro_batches + s.pp - 1);
      break;
    }
    case MfcKind::kTrain:
      train_time(c, mfc, e, phases.steps);
      e.flops = (s.recompute ? 4.0 : 3.0) * double(mfc.epochs) *
                model.spec.forward_flops(double(mfc.n_seqs) * seq_len, seq_len / 2.0);
      e.bubble_fraction = double(s.pp - 1) / double(s.micro_batches + s.pp - 1);
      break;
  }
  e.overhead_s += p.call_overhead_s.value;
  // A node's worker processes share its compute slots (CPU cores): everything, progress of the collectives
  // included, slows down by the node's load.
  const double share = std::max(1.0, (busy + idle_load) / slots);
  for (CallEstimate* part : {&phases.passes, &phases.steps}) {
    part->compute_s *= share;
    part->comm_s *= share;
    part->overhead_s *= share;
    part->tail_s *= share;
  }
  return phases;
}

}  // namespace

CallEstimate estimate_call(const ModelRole& model, const Mfc& mfc, const Strategy& s, bool spans_nodes,
                           int devices_per_node, const HardwareProfile& p, const ShardSizes& shards,
                           double busy_ranks) {
  REALIGN_CHECK(shards.tp == s.tp && shards.pp == s.pp && shards.ep == s.ep);
  const double ranks = double(std::min(s.replicas() * s.tp * s.pp, devices_per_node));
  const double others = std::max(0.0, busy_ranks - ranks);
  const CallPhases full =
      estimate_at_load(model, mfc, s, spans_nodes, devices_per_node, p, shards, ranks, others);
  CallEstimate e = full.passes;
  // A pipeline's stages idle in its bubble: where ranks share compute slots, the call's own load over its
  // passes is its ranks' busy share. (Counting the busy share over the optimizer steps too, which every rank
  // runs at once, estimated dp 2 x pp 2 updates of one micro-batch at 0.65x their measurements.)
  if (s.pp > 1 && p.compute_slots_per_node.value < double(devices_per_node))
    e = estimate_at_load(model, mfc, s, spans_nodes, devices_per_node, p, shards,
                         ranks * (1.0 - e.bubble_fraction), others)
            .passes;
  e.compute_s += full.steps.compute_s;
  e.comm_s += full.steps.comm_s;
  e.overhead_s += full.steps.overhead_s;
  e.time_s = e.compute_s + e.comm_s + e.overhead_s;
  // What the devices hold does not depend on the load: once, after the times.
  e.stages = stage_memory(model, mfc, s, shards);
  for (const MemoryBreakdown& m : e.stages)
    if (m.total() > e.memory.total()) e.memory = m;
  return e;
}

CallEstimate estimate_call(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& profile,
                           int mfc_index, const MfcAssignment& a, double busy_ranks) {
  REALIGN_CHECK(mfc_index >= 0 && mfc_index < int(graph.mfcs.size())) << mfc_index;
  const Mfc& mfc = graph.mfcs[mfc_index];
  const ModelRole& model = graph.model(mfc.model);
  const ShardSizes shards = shard_sizes(model_params(model.spec, model.head), model.spec.n_layers,
                                        a.strategy.tp, a.strategy.pp, a.strategy.ep);
  return estimate_call(model, mfc, a.strategy, mesh_spans_nodes(a.mesh, cluster), cluster.devices_per_node,
                       profile, shards, busy_ranks);
}

}  // namespace realign
