#include "cost/moe_cost.h"

#include <algorithm>
#include <cmath>

#include "cost/memory_model.h"
#include "plan/expert_parallel.h"

namespace realign {

double expert_load_factor(int ep) { return ep > 1 ? kExpertLoadImbalance : 1.0; }

double alltoall_s(double bytes_per_rank, int ep, double load, int devices_per_node, const Link& intra,
                  const Link& inter) {
  if (ep <= 1 || bytes_per_rank <= 0) return 0;
  // Peers on the rank's node: the group's ranks are consecutive and aligned, so a group that fits in a node
  // lies in one; a larger one spans whole nodes.
  const int on_node = ep <= devices_per_node ? ep : devices_per_node;
  const double out = bytes_per_rank * load;
  const double intra_bytes = out * double(on_node - 1) / double(ep);
  const double inter_bytes = out * double(ep - on_node) / double(ep);
  double t = intra_bytes > 0 ? intra_bytes / intra.rate(intra_bytes) : 0.0;
  if (inter_bytes > 0) t = std::max(t, inter_bytes / inter.rate(inter_bytes));
  const Link& slowest = inter_bytes > 0 ? inter : intra;
  return slowest.overhead_s + slowest.latency_s + t;
}

double alltoall_bytes_per_rank(const ModelSpec& m, double tokens, int tp) {
  return tokens / double(tp) * double(m.moe.experts_per_token) * double(m.hidden) * kActivationBytes;
}

double moe_layer_activation_bytes(const ModelSpec& m, double tokens, int tp, int ep) {
  const MoeSpec& e = m.moe;
  const bool cut = experts_cut_by_tp(ep);  // ep 1: every token of the tp group through a 1/tp slice
  const double h = double(m.hidden), own = cut ? tokens : tokens / double(tp);
  const double attention = tokens * h * (10.0 + 8.0 / double(tp));
  const double router = own * double(e.num_experts) * 4.0;
  const double routed = own * double(e.experts_per_token) * expert_load_factor(ep) *
                        (2.0 * h + 6.0 * double(e.expert_intermediate) / (cut ? double(tp) : 1.0));
  const double shared = tokens * 6.0 * double(e.shared_experts * e.shared_intermediate) / double(tp);
  return attention + router + routed + shared;
}

double experts_touched_fraction(const ModelSpec& m, double tokens) {
  if (!m.is_moe() || tokens <= 0) return 0;
  const double pick = double(m.moe.experts_per_token) / double(m.moe.num_experts);
  return 1.0 - std::pow(1.0 - pick, tokens);
}

}  // namespace realign
