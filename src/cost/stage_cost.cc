#include "cost/detail/stage_cost.h"

#include "cost/context_parallel.h"
#include "cost/layer_gemms.h"
#include "cost/moe_cost.h"

namespace realign::detail {
namespace {

// Time of one transformer layer's matmuls over `tokens` tokens on one of its tp ranks (a dense or an MoE
// layer: cost/layer_gemms.h), each at the rate of its shape: tensor parallelism shortens the row-parallel
// matmuls' inner loops, and a routed expert multiplies only the rows sent to it. The FLOPs add up to
// ModelSpec::forward_flops's matmuls.
double layer_matmul_s(const CallContext& c, double tokens, bool moe) {
  const ModelSpec& m = c.model.spec;
  std::vector<GemmShape> gemms = attention_gemms(m, tokens, c.s.tp);
  const std::vector<GemmShape> mlp =
      moe ? moe_mlp_gemms(m, tokens, c.s.tp, c.s.ep, expert_load_factor(c.s.ep))
          : dense_mlp_gemms(m, tokens, c.s.tp);
  gemms.insert(gemms.end(), mlp.begin(), mlp.end());
  double s = 0;
  for (const GemmShape& g : gemms)
    s += g.count * (2.0 * g.rows * g.outputs * g.depth / c.gemm_rate(g.rows, g.depth));
  return s;
}

// An MoE layer's two all-to-alls (dispatch and combine) in one pass over `tokens` tokens of the tp group.
double moe_alltoalls_s(const CallContext& c, double tokens) {
  return 2.0 * alltoall_s(alltoall_bytes_per_rank(c.model.spec, tokens, c.s.tp), c.s.ep,
                          expert_load_factor(c.s.ep), c.devices_per_node, c.intra, c.inter);
}
// FLOPs of attention over `context` tokens in one layer for `tokens` tokens, and of the head.
double layer_attention_flops(const ModelSpec& m, double tokens, double context) {
  return (m.forward_flops(tokens, context) - m.forward_flops(tokens, 0)) / double(m.n_layers);
}
// One layer's attention time on a rank for `tokens` tokens at mean context `context` (its heads' share).
double layer_attention_s(const CallContext& c, double tokens, double context) {
  return layer_attention_flops(c.model.spec, tokens, context) / c.attn_rate(2.0 * context) / c.s.tp;
}
double head_flops(const ModelRole& r, double tokens) {
  const double out = r.head == HeadKind::kValue ? 1.0 : double(r.spec.vocab);
  return 2.0 * tokens * out * double(r.spec.hidden);
}

// The tensor-parallel collectives outside the layers of one forward pass over `tokens` tokens, `head_tokens`
// of them through the head. The vocabulary-parallel embedding sums its slices (one all-reduce of the
// activations); a language-model head either reduces its log-softmax over the vocabulary slices (max, sum
// and target logit: three all-reduces of one float per token; a policy update's entropy, a fourth) or, to
// sample, gathers the logits and broadcasts the sampled tokens. A value head is replicated. These matter for
// small models, where they are a large share of all of a pass's collectives.
double tp_edges_s(const CallContext& c, int stage, double tokens, double head_tokens) {
  if (c.s.tp <= 1) return 0;
  double t = 0;
  if (stage == 0)
    t += ring_allreduce_s(tokens * double(c.model.spec.hidden) * kActivationBytes, c.s.tp, c.tp_link);
  if (stage == c.s.pp - 1 && c.model.head == HeadKind::kLanguageModel) {
    if (c.kind() == MfcKind::kGenerate)
      t += p2p_s(head_tokens * double(c.model.spec.vocab) * 4.0, c.tp_link) +
           p2p_s(head_tokens * 8.0, c.tp_link);
    else
      t += (c.op == MfcOp::kPolicyUpdate ? 4 : 3) * ring_allreduce_s(head_tokens * 4.0, c.s.tp, c.tp_link);
  }
  return t;
}

}  // namespace

StageCost stage_forward(const CallContext& c, int stage, double tokens, double context, double head_tokens,
                        bool decoding) {
  const ModelSpec& m = c.model.spec;
  const Range range = stage_layers(m.n_layers, stage, c.s.pp);
  const double layers = double(range.size()), moe = double(m.moe.moe_layers_in(range.begin, range.end));
  StageCost out;
  // A GEMM's rows are the micro-batch's tokens; causal attention over `context` tokens on average spans
  // sequences of 2 x context.
  const double attention = layer_attention_s(c, tokens, context);
  out.compute = (layers - moe) * (layer_matmul_s(c, tokens, false) + attention);
  if (moe > 0) out.compute += moe * (layer_matmul_s(c, tokens, true) + attention);
  if (stage == c.s.pp - 1)  // vocabulary-parallel: the head splits its outputs
    out.compute += head_flops(c.model, head_tokens) / c.gemm_rate(head_tokens, double(m.hidden)) / c.s.tp;
  if (!decoding) out.compute /= c.p.pass_efficiency.value;
  // Megatron's f/g: one all-reduce after attention, one after the MLP.
  out.comm =
      layers * 2.0 * ring_allreduce_s(tokens * double(m.hidden) * kActivationBytes, c.s.tp, c.tp_link) +
      tp_edges_s(c, stage, tokens, head_tokens);
  if (moe > 0) out.comm += moe * moe_alltoalls_s(c, tokens);
  if (!decoding) out.comm += stage_context_parallel_s(c, stage, tokens, context, false);
  out.overhead = layers * c.p.layer_launch_overhead_s.value;
  return out;
}

double stage_context_parallel_s(const CallContext& c, int stage, double tokens, double context,
                                bool backward) {
  if (c.s.cp <= 1) return 0;
  const ModelSpec& m = c.model.spec;
  const double layers = double(stage_layers(m.n_layers, stage, c.s.pp).size());
  if (c.s.cp_kind == ContextParallel::kUlysses)
    return layers * ulysses_layer_s(m, tokens, c.s.tp, c.s.cp, c.devices_per_node, c.intra, c.inter);
  // The ring overlaps its hops with the attention as the pass runs it (backward: twice the forward's FLOPs,
  // FlashAttention's dQ, dK, dV), at the engine's share of the kernels' rate.
  const double attention =
      (backward ? 2.0 : 1.0) * layer_attention_s(c, tokens, context) / c.p.pass_efficiency.value;
  return layers * ring_exposed_s(tokens * ring_kv_bytes_per_token(m, c.s.tp), attention, c.s.cp, c.cp_link,
                                 backward);
}

double stage_backward_comm_s(const CallContext& c, int stage, double tokens) {
  const double activation = tokens * double(c.model.spec.hidden) * kActivationBytes;
  const Range range = stage_layers(c.model.spec.n_layers, stage, c.s.pp);
  double syncs = 2.0 * double(range.size());
  if (stage == c.s.pp - 1 && c.model.head == HeadKind::kLanguageModel) syncs += 1;
  // The all-to-alls run again in reverse for the gradients of an MoE layer's routed tokens.
  const double moe = double(c.model.spec.moe.moe_layers_in(range.begin, range.end));
  return syncs * ring_allreduce_s(activation, c.s.tp, c.tp_link) +
         (moe > 0 ? moe * moe_alltoalls_s(c, tokens) : 0);
}

double pp_handoff_s(const CallContext& c, double tokens) {
  return c.s.pp > 1 ? p2p_s(tokens * double(c.model.spec.hidden) * kActivationBytes, c.pp_link) : 0.0;
}

double pp_issue_s(const CallContext& c) { return c.s.pp > 1 ? c.pp_link.overhead_s : 0.0; }

void add_stage(CallEstimate& e, const StageCost& sc, double times) {
  e.compute_s += sc.compute * times;
  e.comm_s += sc.comm * times;
  e.overhead_s += sc.overhead * times;
}

namespace {

// The slowest stage's forward of one micro-batch.
StageCost slowest_stage(const CallContext& c, double tokens, double context, double head_tokens) {
  StageCost worst;
  for (int stage = 0; stage < c.s.pp; ++stage) {
    const StageCost sc = stage_forward(c, stage, tokens, context, head_tokens);
    if (sc.total() > worst.total()) worst = sc;
  }
  return worst;
}

}  // namespace

void pipelined_forward(const CallContext& c, CallEstimate& e, double mb_tokens, double context,
                       double head_tokens) {
  const double slots = double(c.s.micro_batches + c.s.pp - 1);
  add_stage(e, slowest_stage(c, mb_tokens, context, head_tokens), slots);
  e.comm_s += slots * pp_issue_s(c) + double(c.s.pp - 1) * pp_handoff_s(c, mb_tokens);
}

}  // namespace realign::detail
