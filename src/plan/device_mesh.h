// DeviceMesh: the block of devices one call runs on. Valid meshes are consecutive devices within one node (an
// engine's pools split a node so: 2 rollout GPUs beside 6 trainers), or a run of whole nodes. The search
// proposes the aligned ones only (enumerate_meshes): power-of-two slices of a node at a multiple of their
// size.
#pragma once

#include <string>
#include <vector>

#include "plan/cluster.h"

namespace realign {

struct DeviceMesh {
  int first = 0;  // global device index
  int size = 1;
  int end() const { return first + size; }
  bool contains(int device) const { return device >= first && device < end(); }
  bool overlaps(const DeviceMesh& o) const { return first < o.end() && o.first < end(); }
  bool operator==(const DeviceMesh& o) const { return first == o.first && size == o.size; }
  bool operator!=(const DeviceMesh& o) const { return !(*this == o); }
  bool operator<(const DeviceMesh& o) const { return first != o.first ? first < o.first : size < o.size; }
};

// Empty when the mesh is valid on the cluster, else why not.
std::string mesh_problem(const DeviceMesh& mesh, const Cluster& cluster);

// Every valid mesh. With `all_node_runs` false, runs of whole nodes are limited to power-of-two counts aligned to
// their size (plus the whole cluster), which keeps the search space small on 1,000-device clusters.
std::vector<DeviceMesh> enumerate_meshes(const Cluster& cluster, bool all_node_runs = false);

// "0-7" or "3" (single device).
std::string to_string(const DeviceMesh& mesh);

}  // namespace realign
