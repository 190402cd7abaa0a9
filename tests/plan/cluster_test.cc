#include "plan/cluster.h"

#include <gtest/gtest.h>

#include "core/config_file.h"

namespace realign {
namespace {

TEST(Cluster, BuiltinDevicesCarrySources) {
  for (const auto& name : builtin_device_names()) {
    const DeviceSpec d = builtin_device(name, "cluster.device");
    EXPECT_FALSE(d.source.empty()) << name;
    EXPECT_GT(d.peak_flops, 0);
    EXPECT_EQ(device_spec_from_json(to_json(d), "x"), d);
  }
}

TEST(Cluster, FromJsonWithInlineDeviceAndErrors) {
  Cluster c = cluster_from_json(parse_yaml("{nodes: 2, devices_per_node: 4, device: a100-80gb}", "t"), "cluster");
  EXPECT_EQ(c.n_devices(), 8);
  EXPECT_EQ(cluster_from_json(to_json(c), "cluster"), c);
  try {
    cluster_from_json(parse_yaml("{nodes: 2, devices_per_node: 4, device: v100}", "t"), "cluster");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.path(), "cluster.device");
  }
  EXPECT_THROW(cluster_from_json(parse_yaml("{nodes: 0, devices_per_node: 4, device: a100-80gb}", "t"), "c"), Error);
  EXPECT_THROW(cluster_from_json(parse_yaml("{nodes: 1, devices_per_node: 4, device: {name: x}}", "t"), "c"), Error);
  EXPECT_THROW(cluster_from_json(parse_yaml("{nodes: 1, gpus: 4, device: a100-80gb}", "t"), "c"), Error);
}

}  // namespace
}  // namespace realign
