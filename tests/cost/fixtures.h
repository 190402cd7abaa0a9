// Shared inputs of the cost tests: graphs built from AlgorithmConfig, clusters of built-in devices, plans.
#pragma once

#include <string>

#include "cost/hardware_profile.h"
#include "graph/algorithms.h"
#include "plan/execution_plan.h"

namespace realign::testing {

inline DataflowGraph make_graph(const std::string& algorithm, const std::string& model, int64_t prompts,
                                int64_t prompt_len, int64_t gen_len, int64_t mini_batches = 1) {
  AlgorithmConfig c;
  c.algorithm = *algorithm_from_string(algorithm);
  for (const auto& role : algorithm_roles(c.algorithm)) c.models[role] = builtin_model(model);
  c.batch.prompts = prompts;
  c.batch.prompt_len = prompt_len;
  c.batch.gen_len = gen_len;
  c.batch.mini_batches = mini_batches;
  return build_graph(c);
}

inline Cluster make_cluster(int nodes, int per_node, const std::string& device = "h100-sxm") {
  Cluster c;
  c.n_nodes = nodes;
  c.devices_per_node = per_node;
  c.device = builtin_device(device, "device");
  return c;
}

// Transfers and the host's own work cost (next to) nothing, so a plan's time is its calls' alone.
inline HardwareProfile free_transfers(const Cluster& cluster) {
  HardwareProfile p = default_profile(cluster.device);
  for (Coefficient* c :
       {&p.intra_node_latency_s, &p.inter_node_latency_s, &p.collective_overhead_s, &p.iteration_overhead_s})
    c->value = 0;
  for (Coefficient* c : {&p.intra_node_bandwidth, &p.inter_node_bandwidth, &p.host_device_bandwidth})
    c->value = 1e30;
  return p;
}

inline MfcAssignment assign(const std::string& mfc, int first, int dp, int tp, int pp,
                            int micro_batches = 1) {
  MfcAssignment a;
  a.mfc = mfc;
  a.mesh = DeviceMesh{first, dp * tp * pp};
  a.strategy = Strategy{dp, tp, pp, micro_batches};
  return a;
}

}  // namespace realign::testing
