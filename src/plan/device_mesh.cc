#include "plan/device_mesh.h"

namespace realign {
namespace {
bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
}  // namespace

std::string mesh_problem(const DeviceMesh& m, const Cluster& c) {
  const int dpn = c.devices_per_node;
  if (m.size <= 0) return "a mesh needs at least one device";
  if (m.first < 0 || m.end() > c.n_devices())
    return "devices " + to_string(m) + " lie outside the cluster's " + std::to_string(c.n_devices()) +
           " devices (0-" + std::to_string(c.n_devices() - 1) + ")";
  if (m.size % dpn == 0) {
    if (m.first % dpn != 0) return "a mesh of whole nodes must start at a node boundary (a multiple of " +
                                   std::to_string(dpn) + ")";
    return "";
  }
  if (m.size > dpn)
    return "a mesh larger than a node (" + std::to_string(dpn) + " devices) must span whole nodes";
  if (c.node_of(m.first) != c.node_of(m.end() - 1))
    return "a mesh inside one node must not cross a node boundary (devices " + to_string(m) + ")";
  return "";
}

std::vector<DeviceMesh> enumerate_meshes(const Cluster& c, bool all_node_runs) {
  std::vector<DeviceMesh> out;
  const int dpn = c.devices_per_node;
  for (int size = 1; size < dpn; size *= 2)
    for (int node = 0; node < c.n_nodes; ++node)
      for (int off = 0; off + size <= dpn; off += size) out.push_back(DeviceMesh{node * dpn + off, size});
  for (int nodes = 1; nodes <= c.n_nodes; ++nodes) {
    const bool aligned_pow2 = is_pow2(nodes);
    if (!all_node_runs && !aligned_pow2 && nodes != c.n_nodes) continue;
    const int step = all_node_runs ? 1 : (aligned_pow2 ? nodes : c.n_nodes);
    for (int start = 0; start + nodes <= c.n_nodes; start += step) out.push_back(DeviceMesh{start * dpn, nodes * dpn});
  }
  return out;
}

std::string to_string(const DeviceMesh& m) {
  return m.size == 1 ? std::to_string(m.first) : std::to_string(m.first) + "-" + std::to_string(m.end() - 1);
}

}  // namespace realign
