// The host probe: a fixed piece of realign's own small-model work (the forward and backward of llama-tiny, 2
// layers, over a batch of 64 rows of 8 tokens, on one thread), timed on the machine at hand in a fraction
// of a second. A CPU profile records the probe time of the machine it was fitted on; `realign train` and
// `validate` time it again and carry the profile to this machine (cost/host_scaling.h).
#pragma once

#include "plan/cluster.h"

namespace realign::profile {

// Median seconds of one probe step, on one CPU thread (a local worker's share of the cores in the runs the
// CPU profile was fitted on); the caller's torch thread count is restored.
double measure_host_probe_s();

// measure_host_probe_s() where the cluster's devices are this machine's CPU cores (a local or torchrun run
// of a CPU cluster), else 0: a GPU profile is not scaled by the host.
double host_probe_s_for(const Cluster& cluster);

}  // namespace realign::profile
