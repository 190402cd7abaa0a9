#include "engines/placements.h"

#include <algorithm>

#include "core/check.h"
#include "core/error.h"
#include "cost/memory_model.h"

namespace realign::engines {

namespace {

// Partitions into exactly k meshes, each starting at the first device not yet covered.
void partitions(const std::vector<DeviceMesh>& meshes, int n_devices, int k, int next,
                std::vector<DeviceMesh>& current, std::vector<std::vector<DeviceMesh>>& out) {
  if (next == n_devices) {
    if (int(current.size()) == k) out.push_back(current);
    return;
  }
  if (int(current.size()) == k) return;
  for (const DeviceMesh& m : meshes) {
    if (m.first != next) continue;
    current.push_back(m);
    partitions(meshes, n_devices, k, m.end(), current, out);
    current.pop_back();
  }
}

}  // namespace

std::vector<std::vector<DeviceMesh>> cover_cluster(const Cluster& cluster, int k, PoolMeshes pools) {
  std::vector<DeviceMesh> meshes = enumerate_meshes(cluster, pools.all_node_runs);
  if (pools.node_splits) {
    const int dpn = cluster.devices_per_node;
    for (int node = 0; node < cluster.n_nodes; ++node)
      for (int cut = 1; cut < dpn; ++cut)
        for (const DeviceMesh m : {DeviceMesh{node * dpn, cut}, DeviceMesh{node * dpn + cut, dpn - cut}})
          if (std::find(meshes.begin(), meshes.end(), m) == meshes.end()) meshes.push_back(m);
  }
  std::vector<std::vector<DeviceMesh>> parts, out;
  std::vector<DeviceMesh> current;
  partitions(meshes, cluster.n_devices(), k, 0, current, parts);
  for (auto& p : parts) {
    std::sort(p.begin(), p.end());
    do out.push_back(p);
    while (std::next_permutation(p.begin(), p.end()));
  }
  return out;
}

std::vector<Json> training_backends(const DataflowGraph& graph, const Cluster& cluster,
                                    const std::string& sharded) {
  std::vector<Json> out = {{{"backend", "megatron"}}};
  if (!graph.model(Role::kActor).spec.is_moe()) out.push_back({{"backend", sharded}, {"zero_stage", 3}});
  for (Json& o : out) o["gpus_per_node"] = cluster.devices_per_node;
  return out;
}

bool sharded_backend(const Placement& placement) { return placement.options.value("zero_stage", 0) == 3; }

std::string sharded_layout_problem(const Mfc& mfc, const Strategy& s, bool tensor_parallel) {
  if (s.pp != 1 || s.ep != 1 || (!tensor_parallel && s.tp != 1))
    return tensor_parallel ? "FSDP training is proposed with data and tensor parallelism only"
                           : "FSDP training is data parallel only";
  if (mfc.kind() == MfcKind::kTrain && s.zero1 != (s.dp > 1))
    return "FSDP shards the optimizer state over dp";
  return "";
}

std::vector<std::string> present(const DataflowGraph& graph, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (graph.mfc_index(n) >= 0) out.push_back(n);
  return out;
}

Placement group_placement(const DataflowGraph& graph, const std::vector<std::vector<std::string>>& groups,
                          const std::vector<DeviceMesh>& meshes, std::string name, Json options) {
  REALIGN_CHECK(groups.size() == meshes.size());
  Placement p;
  p.name = std::move(name);
  p.options = std::move(options);
  p.meshes.assign(graph.mfcs.size(), DeviceMesh{-1, 0});
  for (size_t g = 0; g < groups.size(); ++g)
    for (const auto& call : groups[g]) {
      const int i = graph.mfc_index(call);
      if (i >= 0) p.meshes[size_t(i)] = meshes[g];
    }
  for (size_t i = 0; i < p.meshes.size(); ++i)
    REALIGN_CHECK(p.meshes[i].first >= 0) << graph.mfcs[i].name << " is in no group";
  return p;
}

NodeShape node_shape(const DeviceMesh& mesh, const Cluster& cluster) {
  if (mesh.size >= cluster.devices_per_node)
    return {mesh.size / cluster.devices_per_node, cluster.devices_per_node};
  return {1, mesh.size};
}

std::string batch_split_problem(const Mfc& mfc, const Strategy& s) {
  const int64_t seqs = mfc.seqs_per_pass();
  if (mfc.kind() == MfcKind::kTrain && mfc.min_seqs_per_step() != mfc.max_seqs_per_step())
    return "the optimizer steps' batches differ in size";
  if (seqs % s.dp != 0)
    return std::to_string(seqs) + " sequences do not split over " + std::to_string(s.dp) + " dp ranks";
  if ((seqs / s.dp) % s.micro_batches != 0)
    return std::to_string(seqs / s.dp) + " sequences per rank do not split into " +
           std::to_string(s.micro_batches) + " micro-batches";
  return "";
}

int64_t micro_batch_per_gpu(const Mfc& mfc, const Strategy& s) {
  return std::max<int64_t>(1, seqs_per_micro_batch(mfc, s));
}

int micro_batches_of(const std::string& key, int64_t seqs, int dp, int64_t per_gpu) {
  if (per_gpu < 1) throw Error(key, "must be at least 1 sequence, got " + std::to_string(per_gpu));
  if (seqs % dp != 0)
    throw Error(key, std::to_string(seqs) + " sequences do not split over " + std::to_string(dp) +
                         " data-parallel ranks");
  const int64_t per_rank = seqs / dp;
  int64_t n = (per_rank + per_gpu - 1) / per_gpu;
  while (per_rank % n != 0) ++n;
  return int(n);
}

bool has_options(const Placement& placement, const Json& options) {
  for (const auto& [key, value] : options.items())
    if (placement.options.value(key, Json(false)) != value) return false;
  return true;
}

}  // namespace realign::engines
