// Shared inputs of the cost tests: graphs built from AlgorithmConfig, clusters of built-in devices, plans.
#pragma once

#include <string>

#include "cost/hardware_profile.h"
#include "cost/simulator.h"
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

// GRPO split over 2 nodes of 8: generation, the reference and the reward model on node 0; actor_inf and
// training on node 1.
inline ExecutionPlan split_grpo_plan() {
  ExecutionPlan p;
  p.assignments = {assign("actor_gen", 0, 2, 4, 1), assign("ref_inf", 0, 2, 4, 1),
                   assign("reward_inf", 0, 2, 4, 1), assign("actor_inf", 8, 2, 4, 1),
                   assign("actor_train", 8, 2, 4, 1)};
  return p;
}

// `g` (GRPO) on split_grpo_plan with generation taking `gen_s`, training `train_s`, every other call and
// move nothing: steady states computable by hand.
inline SimulationResult run_hand_timed(const DataflowGraph& g, double gen_s, double train_s) {
  const Cluster cluster = make_cluster(2, 8);
  Simulator sim(g, cluster, free_transfers(cluster));
  for (int i = 0; i < int(g.mfcs.size()); ++i)
    sim.set_call_time(i, g.mfcs[size_t(i)].name == "actor_gen"     ? gen_s
                         : g.mfcs[size_t(i)].name == "actor_train" ? train_s
                                                                   : 0.0);
  return sim.run(split_grpo_plan());
}

}  // namespace realign::testing
