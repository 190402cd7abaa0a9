#include "cost/comm_model.h"

namespace realign {

Link intra_node_link(const HardwareProfile& p) {
  return Link{p.intra_node_latency_s.value, p.intra_node_bandwidth.value};
}

Link inter_node_link(const HardwareProfile& p) {
  return Link{p.inter_node_latency_s.value, p.inter_node_bandwidth.value};
}

double ring_allreduce_s(double bytes, int n, const Link& link) {
  if (n <= 1 || bytes <= 0) return 0;
  const double steps = 2.0 * (n - 1);
  return steps * (link.latency_s + bytes / n / link.bandwidth);
}

double p2p_s(double bytes, const Link& link) {
  if (bytes <= 0) return 0;
  return link.latency_s + bytes / link.bandwidth;
}

}  // namespace realign
