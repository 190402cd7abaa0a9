#include "plan/device_mesh.h"

#include <gtest/gtest.h>

#include "plan/test_graphs.h"

namespace realign {
namespace {

// Consecutive devices within a node (the engines split a node so: veRL's 2 rollout GPUs beside 6 trainers),
// or whole nodes; the search proposes only the aligned power-of-two slices.
TEST(DeviceMesh, BlocksWithinANodeOrWholeNodes) {
  const Cluster c = testing::h100(2);
  EXPECT_EQ(mesh_problem({0, 16}, c), "");
  EXPECT_EQ(mesh_problem({8, 8}, c), "");
  EXPECT_EQ(mesh_problem({4, 4}, c), "");
  EXPECT_EQ(mesh_problem({13, 1}, c), "");
  EXPECT_EQ(mesh_problem({2, 6}, c), "");   // the rest of a node beside a 2-device pool
  EXPECT_EQ(mesh_problem({10, 3}, c), "");  // any size, any start within the node
  EXPECT_NE(mesh_problem({6, 4}, c), "");   // crosses into the next node
  EXPECT_NE(mesh_problem({4, 8}, c), "");   // node-sized but not on a boundary
  EXPECT_NE(mesh_problem({0, 12}, c), "");  // more than a node, not whole nodes
  EXPECT_NE(mesh_problem({8, 16}, c), "");  // outside the cluster
}

TEST(DeviceMesh, NodesOfAnySize) {
  const Cluster c = testing::h100(3, 6);
  EXPECT_EQ(mesh_problem({0, 6}, c), "");
  EXPECT_EQ(mesh_problem({6, 12}, c), "");
  EXPECT_EQ(mesh_problem({4, 2}, c), "");
  EXPECT_NE(mesh_problem({4, 4}, c), "");  // would cross into the next node
  for (const auto& m : enumerate_meshes(c, true)) EXPECT_EQ(mesh_problem(m, c), "") << to_string(m);
}

TEST(DeviceMesh, EnumerationCountsOnOneNode) {
  const auto meshes = enumerate_meshes(testing::h100(1));
  EXPECT_EQ(meshes.size(), 8u + 4u + 2u + 1u);
  for (const auto& m : meshes) EXPECT_EQ(m.first % m.size, 0) << to_string(m);  // aligned: the search's
  const auto big = enumerate_meshes(testing::h100(128));
  // Sub-node: 128 * (8+4+2); node runs: 128+64+32+16+8+4+2+1.
  EXPECT_EQ(big.size(), size_t(128 * 14 + 255));
}

}  // namespace
}  // namespace realign
