// The communication model: alpha-beta links (latency per message, bandwidth per device and direction) and the
// collectives the cost model charges (ring all-reduce, point-to-point sends).
#pragma once

#include "cost/hardware_profile.h"

namespace realign {

struct Link {
  double latency_s = 0;
  double bandwidth = 0;  // bytes/s per device, one direction, for large messages
  // The profile's bandwidth coefficient when it is a curve over message size (small messages reach less of
  // the link's bandwidth), else null.
  const Coefficient* curve = nullptr;
  double overhead_s =
      0;  // per collective or message, issued by the host (HardwareProfile::collective_overhead_s)
  // Bytes/s for a message of `bytes` (the curve's value is `bandwidth`, its last point).
  double rate(double bytes) const { return curve ? curve->at(bytes) : bandwidth; }
};

Link intra_node_link(const HardwareProfile& p);
// The intra-node link as an all-to-all uses it (HardwareProfile::intra_node_alltoall_bandwidth).
Link intra_node_alltoall_link(const HardwareProfile& p);
Link inter_node_link(const HardwareProfile& p);

// All-reduce of `bytes` over n ranks: the ring's bandwidth term 2(n-1)/n x bytes / bandwidth plus
// ceil(log2 n) latencies plus the host's overhead per collective (NCCL switches to tree/low-latency protocols
// for small messages, so a small all-reduce costs a few latencies, not 2(n-1) of them); 0 for one rank.
double ring_allreduce_s(double bytes, int n, const Link& link);
// One message of `bytes` between two devices; 0 for no bytes.
double p2p_s(double bytes, const Link& link);

}  // namespace realign
