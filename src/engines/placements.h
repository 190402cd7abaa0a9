// Building blocks of engines' placements: roles that each take their own block of devices.
#pragma once

#include <string>
#include <vector>

#include "engines/engine.h"

namespace realign::engines {

// Which meshes an engine's pools take beyond the search's aligned ones (plan/device_mesh.h enumerate_meshes).
struct PoolMeshes {
  bool all_node_runs = false;  // runs of whole nodes of any count (trainer.nnodes = 12 beside 4)
  bool node_splits = false;    // a node cut anywhere in two (2 rollout GPUs beside 6 trainers on a node)
};

// Every way to cover the whole cluster with `k` disjoint valid meshes, in every order: out[j][g] is group g's
// mesh.
std::vector<std::vector<DeviceMesh>> cover_cluster(const Cluster& cluster, int k, PoolMeshes pools = {});

// A placement giving each group of calls one mesh: groups[g] lists call names (absent calls are skipped);
// calls in no group are CHECKed against.
Placement group_placement(const DataflowGraph& graph, const std::vector<std::vector<std::string>>& groups,
                          const std::vector<DeviceMesh>& meshes, std::string name,
                          Json options = Json::object());

// The engine-wide options of the training backends an adapter offers, each with the node size
// ("gpus_per_node"): Megatron's ("backend": "megatron"), and for a dense model a weight-sharding one named
// `sharded` (FSDP: "zero_stage": 3, priced as ZeRO-3 over each tensor-parallel shard's dp ranks; its expert
// parallelism was not read, so not for a mixture of experts).
std::vector<Json> training_backends(const DataflowGraph& graph, const Cluster& cluster,
                                    const std::string& sharded);
// Whether a placement sets every switch of `options` to its value (an absent switch reads as false).
bool has_options(const Placement& placement, const Json& options);

// Whether a placement's backend is the weight-sharding one.
bool sharded_backend(const Placement& placement);
// Empty when the weight-sharding backend runs `s` for `mfc`, else why not: no pipeline or expert
// parallelism, tensor parallelism only where the backend has it (FSDP2 with DTensor), and a train call's
// optimizer state sharded over dp with the weights (ZeRO-3's sharding beyond realign's ZeRO-1).
std::string sharded_layout_problem(const Mfc& mfc, const Strategy& s, bool tensor_parallel);

// The calls of `names` that the graph has.
std::vector<std::string> present(const DataflowGraph& graph, const std::vector<std::string>& names);

// Nodes and GPUs per node of a mesh as Ray-placed engines count them: whole nodes, or a part of one node.
struct NodeShape {
  int nodes = 1;
  int gpus_per_node = 1;
};
NodeShape node_shape(const DeviceMesh& mesh, const Cluster& cluster);

// Empty when the call's batch splits evenly: its sequences (per optimizer step for a train call) over the dp
// ranks, and each rank's share into the micro-batches, as the engines' batch dispatch requires (veRL chunks
// its DataProto, DeepSpeed's train batch is micro-batch x accumulation x ranks); else why not.
std::string batch_split_problem(const Mfc& mfc, const Strategy& s);

// Sequences per GPU in one micro-batch of a call under `s` (at least 1).
int64_t micro_batch_per_gpu(const Mfc& mfc, const Strategy& s);
// Its inverse, for a launch script's setting `key`: the micro-batches per dp rank that `seqs` sequences (per
// optimizer step for a train call) over `dp` ranks make in micro-batches of `per_gpu`, an uneven last one
// counted as a full one (the count rounded up to one dividing the rank's sequences, as realign's
// micro-batches are equal). Throws Error(key) when the sequences do not split over the ranks.
int micro_batches_of(const std::string& key, int64_t seqs, int dp, int64_t per_gpu);

}  // namespace realign::engines
