#include "cost/comm_model.h"

#include <cmath>

namespace realign {

Link intra_node_link(const HardwareProfile& p) {
  return Link{p.intra_node_latency_s.value, p.intra_node_bandwidth.value,
              p.intra_node_bandwidth.is_curve() ? &p.intra_node_bandwidth : nullptr,
              p.collective_overhead_s.value};
}

Link intra_node_alltoall_link(const HardwareProfile& p) {
  const Coefficient& b = p.intra_node_alltoall_bandwidth;
  return Link{p.intra_node_latency_s.value, b.value, b.is_curve() ? &b : nullptr,
              p.collective_overhead_s.value};
}

Link inter_node_link(const HardwareProfile& p) {
  return Link{p.inter_node_latency_s.value, p.inter_node_bandwidth.value,
              p.inter_node_bandwidth.is_curve() ? &p.inter_node_bandwidth : nullptr,
              p.collective_overhead_s.value};
}

double ring_allreduce_s(double bytes, int n, const Link& link) {
  if (n <= 1 || bytes <= 0) return 0;
  const double hops = std::ceil(std::log2(double(n)));
  return link.overhead_s + hops * link.latency_s + 2.0 * (n - 1) / n * bytes / link.rate(bytes);
}

double p2p_s(double bytes, const Link& link) {
  if (bytes <= 0) return 0;
  return link.overhead_s + link.latency_s + bytes / link.rate(bytes);
}

}  // namespace realign
