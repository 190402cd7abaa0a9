// Cluster: nodes x devices of one device type. DeviceSpec holds a device's peak figures, each with its source.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign {

struct DeviceSpec {
  std::string name;
  double peak_flops = 0;         // dense bf16 FLOP/s
  double memory_bytes = 0;       // device memory
  double memory_bandwidth = 0;   // bytes/s
  double intra_node_bandwidth = 0;  // bytes/s per device, one direction (NVLink)
  double inter_node_bandwidth = 0;  // bytes/s per device, one direction (the device's NIC share)
  double intra_node_latency = 0;    // seconds per message
  double inter_node_latency = 0;
  std::string source;               // where the figures come from
  // Devices in one NVLink domain that spans nodes (the GB200 NVL72: 72 GPUs in 18 compute trays of 4), 0
  // where a node is its domain. Such a device's inter_node_* figures are the NVLink's within the domain:
  // realign prices two link levels, so a cluster of more devices than the domain, whose domains would meet
  // over InfiniBand, is refused (cluster_from_json).
  int nvlink_domain = 0;
  bool operator==(const DeviceSpec& o) const;
};

// "h100-sxm", "h200", "h20", "h800", "a100-80gb", "gb200", and "cpu-gloo" (this project's CPU test machines);
// Error naming `path` otherwise.
DeviceSpec builtin_device(const std::string& name, const std::string& path);
std::vector<std::string> builtin_device_names();
DeviceSpec device_spec_from_json(const Json& j, const std::string& path);
Json to_json(const DeviceSpec& d);

// A CPU device: its name starts with "cpu", as the builtin cpu-gloo. Local workers on a CPU node share its
// cores, and realign's runtime executes plans for such clusters (it runs on CPU workers over Gloo only).
bool is_cpu_device(const DeviceSpec& d);

// The largest cluster a config may name: devices per node, and devices in all. At 131,072 devices
// plan_iteration's presets and candidates take about 3 s before the search starts, whatever its time budget
// (65,536 nodes of 8 took 16 s and 2 GB), and the simulator's cache keys hold a device index in 20 bits.
// cluster_from_json refuses more, naming the field.
constexpr int kMaxDevicesPerNode = 1024;
constexpr int kMaxDevices = 1 << 17;

struct Cluster {
  int n_nodes = 1;
  int devices_per_node = 8;
  DeviceSpec device;
  int n_devices() const { return n_nodes * devices_per_node; }
  int node_of(int device) const { return device / devices_per_node; }
  bool operator==(const Cluster& o) const {
    return n_nodes == o.n_nodes && devices_per_node == o.devices_per_node && device == o.device;
  }
};

// {nodes, devices_per_node, device: name | {spec fields} | "path.json"}; errors name the field.
Cluster cluster_from_json(const Json& j, const std::string& path);
Json to_json(const Cluster& c);

}  // namespace realign
