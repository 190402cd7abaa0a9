#include "model/moe.h"

#include <ATen/ATen.h>

#include "core/check.h"
#include "graph/param_layout.h"
#include "model/ep_ops.h"
#include "model/tp_ops.h"

namespace realign::model {
namespace {

std::vector<int64_t> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// Rows x (M, H), each for this rank's expert local[m]: the experts' outputs (M, H).
at::Tensor run_experts(const MoeWeights& w, const at::Tensor& x, const at::Tensor& local) {
  at::Tensor y = at::zeros_like(x);
  for (int64_t e = 0; e < w.gate.size(0); ++e) {
    const at::Tensor rows = (local == e).nonzero().flatten();
    if (rows.numel() == 0) continue;
    const at::Tensor xe = x.index_select(0, rows);
    const at::Tensor inner = at::silu(at::linear(xe, w.gate[e])) * at::linear(xe, w.up[e]);
    y = y.index_add(0, rows, at::linear(inner, w.down[e]));
  }
  return y;
}

// Pairs (row, expert) of rows x (n, H) dispatched over `ep` to the ranks holding the experts (E/ep
// consecutive ones each), run there and combined back: the outputs (n*k, H) in pair order.
at::Tensor dispatch_and_combine(const MoeWeights& w, const at::Tensor& x, const at::Tensor& pair_rows,
                                const at::Tensor& pair_experts, int64_t n_experts, comm::Group& ep) {
  const int64_t per_rank = n_experts / ep.size();
  const at::Tensor dest = at::div(pair_experts, per_rank, "floor");
  // Stable, so the pairs a rank receives keep their order and every run repeats exactly.
  const at::Tensor order = std::get<1>(dest.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false));
  const std::vector<int64_t> send = to_vector(at::bincount(dest, {}, ep.size()));
  const std::vector<int64_t> recv = exchange_counts(ep, send);
  const at::Tensor sent_experts = pair_experts.index_select(0, order).unsqueeze(1).contiguous();
  const at::Tensor local =
      ep.all_to_all_rows(sent_experts.cpu(), send, recv).flatten().to(x.device()) - ep.rank() * per_rank;
  REALIGN_CHECK(local.numel() == 0 ||
                (local.min().item<int64_t>() >= 0 && local.max().item<int64_t>() < per_rank))
      << "tokens routed to experts this rank does not hold";
  const at::Tensor got = exchange_rows(x.index_select(0, pair_rows.index_select(0, order)), ep, send, recv);
  const at::Tensor back = exchange_rows(run_experts(w, got, local), ep, recv, send);
  return back.index_select(0, at::argsort(order));
}

}  // namespace

Routing route_tokens(const MoeSpec& spec, const at::Tensor& h, const at::Tensor& router) {
  REALIGN_CHECK(spec.scoring == RouterScoring::kSoftmax && !spec.selection_bias && spec.groups == 1)
      << "the runtime routes by softmax top-k only";
  const at::Tensor probs = at::softmax(at::linear(h, router), -1, at::kFloat);
  auto [weights, experts] = probs.topk(spec.experts_per_token, -1);
  if (spec.normalize_top_k) weights = weights / weights.sum(-1, true);
  return Routing{experts, weights.to(h.scalar_type())};
}

at::Tensor moe_mlp(const MoeSpec& spec, const MoeWeights& w, const at::Tensor& h, comm::Group& tp,
                   comm::Group& ep) {
  const int64_t H = h.size(-1), k = spec.experts_per_token;
  const at::Tensor flat = h.reshape({-1, H});
  const int64_t N = flat.size(0);
  const Routing r = route_tokens(spec, flat, w.router);
  // The routing weights meet tp-partial expert outputs (ep = 1) or this rank's share of the tokens (ep > 1):
  // f sums their gradient over tp, as it does the input's.
  const at::Tensor x = copy_to_tp(flat, tp), weights = copy_to_tp(r.weights, tp);
  at::Tensor shared;
  if (w.shared_gate.defined()) {
    const at::Tensor inner = at::silu(at::linear(x, w.shared_gate)) * at::linear(x, w.shared_up);
    shared = at::linear(inner, w.shared_down);
    if (w.shared_scale.defined())
      shared = copy_to_tp(at::sigmoid(at::linear(flat, w.shared_scale)), tp) * shared;
  }
  at::Tensor out;
  if (ep.size() == 1) {
    const at::Tensor pair_rows = at::arange(N, r.experts.options()).repeat_interleave(k);
    const at::Tensor pairs = run_experts(w, x.index_select(0, pair_rows), r.experts.flatten());
    out = at::zeros_like(x).index_add(0, pair_rows, pairs * weights.reshape({-1, 1}));
    out = reduce_from_tp(shared.defined() ? out + shared : out, tp);
  } else {
    const Range mine = balanced_part(N, tp.rank(), tp.size());
    const at::Tensor xs = x.narrow(0, mine.begin, mine.size());
    const at::Tensor pair_rows = at::arange(mine.size(), r.experts.options()).repeat_interleave(k);
    const at::Tensor pair_experts = r.experts.narrow(0, mine.begin, mine.size()).flatten();
    const at::Tensor pairs = dispatch_and_combine(w, xs, pair_rows, pair_experts, spec.num_experts, ep);
    const at::Tensor ws = weights.narrow(0, mine.begin, mine.size()).reshape({-1, 1});
    out = at::zeros_like(xs).index_add(0, pair_rows, pairs * ws);
    std::vector<int64_t> sizes;
    for (int t = 0; t < tp.size(); ++t) sizes.push_back(balanced_part(N, t, tp.size()).size());
    out = gather_rows(out, tp, sizes);
    if (shared.defined()) out = out + reduce_from_tp(shared, tp);
  }
  return out.view(h.sizes());
}

}  // namespace realign::model
