#include "plan/cluster.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

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

// The error reading the cluster `yaml` gives (path and message), or "" where it reads.
std::pair<std::string, std::string> error_of(const std::string& yaml) {
  try {
    cluster_from_json(parse_yaml(yaml, "t"), "cluster");
  } catch (const Error& e) {
    return {e.path(), e.what()};
  }
  return {"", ""};
}

TEST(Cluster, FromJsonWithInlineDeviceAndErrors) {
  Cluster c = cluster_from_json(parse_yaml("{nodes: 2, devices_per_node: 4, device: a100-80gb}", "t"), "cluster");
  EXPECT_EQ(c.n_devices(), 8);
  EXPECT_EQ(cluster_from_json(to_json(c), "cluster"), c);
  EXPECT_EQ(error_of("{nodes: 2, devices_per_node: 4, device: v100}").first, "cluster.device");
  EXPECT_THROW(cluster_from_json(parse_yaml("{nodes: 0, devices_per_node: 4, device: a100-80gb}", "t"), "c"), Error);
  EXPECT_THROW(cluster_from_json(parse_yaml("{nodes: 1, devices_per_node: 4, device: {name: x}}", "t"), "c"), Error);
  EXPECT_THROW(cluster_from_json(parse_yaml("{nodes: 1, gpus: 4, device: a100-80gb}", "t"), "c"), Error);
}

// The GB200's inter-node link is NVLink within one NVL72 domain of 72 GPUs: NeMo-RL's nodes of 4 (compute
// trays) up to 18 of them; beyond, racks would meet over InfiniBand, which the two link levels do not price,
// so the cluster is refused naming cluster.nodes. A device spec with the field round-trips.
TEST(Cluster, AGb200ClusterStaysInOneNvl72Domain) {
  const DeviceSpec gb200 = builtin_device("gb200", "cluster.device");
  EXPECT_EQ(gb200.nvlink_domain, 72);
  EXPECT_EQ(gb200.inter_node_bandwidth, gb200.intra_node_bandwidth);
  EXPECT_EQ(to_json(gb200)["nvlink_domain"], 72);
  EXPECT_FALSE(to_json(builtin_device("h100-sxm", "d")).contains("nvlink_domain"));  // a node is its domain
  const Cluster c =
      cluster_from_json(parse_yaml("{nodes: 18, devices_per_node: 4, device: gb200}", "t"), "cluster");
  EXPECT_EQ(c.n_devices(), 72);
  EXPECT_EQ(cluster_from_json(to_json(c), "cluster"), c);
  const auto [path, message] = error_of("{nodes: 32, devices_per_node: 4, device: gb200}");
  EXPECT_EQ(path, "cluster.nodes");
  EXPECT_NE(message.find("more than its NVLink domain of 72"), std::string::npos) << message;
  EXPECT_NE(message.find("at most 18 nodes"), std::string::npos) << message;
  // Without the domain (a spec of the user's own) the same cluster prices its inter-node link as given.
  Json own = to_json(gb200);
  own.erase("nvlink_domain");
  own["inter_node_bandwidth"] = 50e9;
  EXPECT_EQ(
      cluster_from_json(Json{{"nodes", 32}, {"devices_per_node", 4}, {"device", own}}, "cluster").n_devices(),
      128);
  // The H800 is the H100 with its NVLink cut to 400 GB/s bidirectional.
  const DeviceSpec h800 = builtin_device("h800", "cluster.device"), h100 = builtin_device("h100-sxm", "d");
  EXPECT_EQ(h800.peak_flops, h100.peak_flops);
  EXPECT_EQ(h800.memory_bandwidth, h100.memory_bandwidth);
  EXPECT_EQ(h800.intra_node_bandwidth, 200e9);
}

}  // namespace
}  // namespace realign
