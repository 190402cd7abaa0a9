#include "plan/cluster.h"

#include <map>

#include "core/config_file.h"
#include "core/units.h"

namespace realign {

bool DeviceSpec::operator==(const DeviceSpec& o) const {
  return name == o.name && peak_flops == o.peak_flops && memory_bytes == o.memory_bytes &&
         memory_bandwidth == o.memory_bandwidth && intra_node_bandwidth == o.intra_node_bandwidth &&
         inter_node_bandwidth == o.inter_node_bandwidth && intra_node_latency == o.intra_node_latency &&
         inter_node_latency == o.inter_node_latency && source == o.source && nvlink_domain == o.nvlink_domain;
}

bool is_cpu_device(const DeviceSpec& d) { return d.name.rfind("cpu", 0) == 0; }

namespace {

const std::map<std::string, DeviceSpec>& devices() {
  static const std::map<std::string, DeviceSpec> table = [] {
    std::map<std::string, DeviceSpec> t;
    DeviceSpec h100;
    h100.name = "h100-sxm";
    h100.peak_flops = 989e12;
    h100.memory_bytes = 80 * kGB;
    h100.memory_bandwidth = 3.35e12;
    h100.intra_node_bandwidth = 450 * kGB;
    h100.inter_node_bandwidth = 50 * kGB;
    h100.intra_node_latency = 10e-6;
    h100.inter_node_latency = 20e-6;
    h100.source =
        "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 TFLOP/s dense BF16, 80 GB HBM3 at 3.35 TB/s, "
        "NVLink 900 GB/s bidirectional (450 GB/s each way); one 400 Gb/s ConnectX-7 NIC per GPU as in DGX H100 "
        "(50 GB/s); latencies: typical NCCL small-message figures (NVLink ~10 us, InfiniBand ~20 us)";
    t[h100.name] = h100;
    DeviceSpec a100;
    a100.name = "a100-80gb";
    a100.peak_flops = 312e12;
    a100.memory_bytes = 80 * kGB;
    a100.memory_bandwidth = 2.039e12;
    a100.intra_node_bandwidth = 300 * kGB;
    a100.inter_node_bandwidth = 25 * kGB;
    a100.intra_node_latency = 10e-6;
    a100.inter_node_latency = 20e-6;
    a100.source =
        "NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB): 312 TFLOP/s dense BF16, 80 GB HBM2e at 2,039 GB/s, "
        "NVLink 600 GB/s bidirectional (300 GB/s each way); one 200 Gb/s HDR NIC per GPU as in DGX A100 "
        "(25 GB/s); latencies: typical NCCL small-message figures";
    t[a100.name] = a100;
    // The Hopper parts of the published RL runs beside the H100: the H20 (veRL's fully_async runs, MoonshotAI's
    // checkpoint-engine figures) and the H200.
    DeviceSpec h20 = h100;
    h20.name = "h20";
    h20.peak_flops = 148e12;
    h20.memory_bytes = 96 * kGB;
    h20.memory_bandwidth = 4.0e12;
    h20.source =
        "NVIDIA H20 (Hopper, for the Chinese market; no public NVIDIA datasheet, figures as reported, e.g. "
        "willitrunai.com/gpus/h20-96gb): 148 TFLOP/s dense BF16/FP16, 96 GB HBM3 at 4.0 TB/s, NVLink4 900 GB/s "
        "bidirectional (450 GB/s each way); one 400 Gb/s NIC per GPU and latencies as the H100's";
    t[h20.name] = h20;
    DeviceSpec h200 = h100;
    h200.name = "h200";
    h200.memory_bytes = 141 * kGB;
    h200.memory_bandwidth = 4.8e12;
    h200.source =
        "NVIDIA H200 Tensor Core GPU datasheet (SXM): 141 GB HBM3e at 4.8 TB/s; 1,979 TFLOP/s BF16 with sparsity, "
        "989 dense, NVLink 900 GB/s bidirectional, as the H100 SXM; one 400 Gb/s NIC per GPU and latencies as "
        "the H100's";
    t[h200.name] = h200;
    // The H800 of DeepSeek's published runs: the H100 SXM with its NVLink cut.
    DeviceSpec h800 = h100;
    h800.name = "h800";
    h800.intra_node_bandwidth = 200 * kGB;
    h800.source =
        "NVIDIA H800 SXM (the H100 SXM for export markets; no public NVIDIA datasheet, figures as "
        "reported, e.g. philisun.com, 'NVIDIA H800 vs H100'): the H100 SXM's compute (989 TFLOP/s dense "
        "BF16) and memory (80 GB HBM3 at 3.35 TB/s), NVLink cut to 400 GB/s bidirectional (200 GB/s each "
        "way; DeepSeek-V3's report, arXiv 2412.19437 section 3.2.2, measures 160 GB/s over it); one 400 "
        "Gb/s InfiniBand NIC per GPU (the report's 50 GB/s) and latencies as the H100's";
    t[h800.name] = h800;
    // The GB200 of NeMo-RL's published GB200 runs, whose recipes see nodes of 4 GPUs (cluster.gpus_per_node
    // 4: one compute tray). An NVL72 rack joins its 18 trays' 72 GPUs in one NVLink domain through NVLink
    // switch trays, so a GPU reaches another tray's as fast as its own tray's: realign's inter-node link is
    // NVLink within the domain, and a cluster beyond 72 GPUs, whose racks meet over InfiniBand (one 400 Gb/s
    // ConnectX-7 per GPU), is refused rather than priced as if one domain (nvlink_domain).
    DeviceSpec gb200;
    gb200.name = "gb200";
    gb200.peak_flops = 2.5e15;
    gb200.memory_bytes = 186 * kGB;
    gb200.memory_bandwidth = 8e12;
    gb200.intra_node_bandwidth = 900 * kGB;
    gb200.inter_node_bandwidth = 900 * kGB;
    gb200.intra_node_latency = 10e-6;
    gb200.inter_node_latency = 10e-6;
    gb200.nvlink_domain = 72;
    gb200.source =
        "NVIDIA GB200 NVL72 (per GPU, the B200 of a GB200 superchip at 1,200 W): 2,500 TFLOP/s dense BF16 "
        "(5,000 with sparsity; NVIDIA's Blackwell datasheet as tabled at "
        "glennklockwood.com/garden/processors/B200; the NVL72's 360 PFLOP/s FP16/BF16 with sparsity over "
        "72 GPUs, halved), 186 GB HBM3e (the NVL72's 13.4 TB over 72; MLPerf Inference v6.1 system "
        "description GB200-NVL72_GB200-186GB, mlcommons/inference_results_v6.1) at 8 TB/s (the NVL72's 576 "
        "TB/s over 72), NVLink 5 at 1.8 TB/s bidirectional (900 GB/s each way) to every GPU of the 72-GPU "
        "NVLink domain, 18 compute trays of 4 GPUs; latencies as NVLink 4's";
    t[gb200.name] = gb200;
    DeviceSpec cpu;
    cpu.name = "cpu-gloo";
    cpu.peak_flops = 195e9;
    cpu.memory_bytes = 24 * kGiB;
    cpu.memory_bandwidth = 10 * kGB;
    cpu.intra_node_bandwidth = 1.1 * kGB;
    cpu.inter_node_bandwidth = 1.1 * kGB;
    cpu.intra_node_latency = 50e-6;
    cpu.inter_node_latency = 50e-6;
    cpu.source =
        "shared/LIBTORCH-NOTES.md, measured on the project's 2-core machines: fp32 GEMM ~195 GFLOP/s with "
        "OpenBLAS, Gloo all-reduce of 64 MiB between 2 local processes ~1.1 GB/s; 24 GiB RAM; memory bandwidth "
        "and latency are rough placeholders until `realign profile` measures them";
    t[cpu.name] = cpu;
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> builtin_device_names() {
  std::vector<std::string> names;
  for (const auto& kv : devices()) names.push_back(kv.first);
  return names;
}

DeviceSpec builtin_device(const std::string& name, const std::string& path) {
  auto it = devices().find(name);
  if (it != devices().end()) return it->second;
  std::string known;
  for (const auto& n : builtin_device_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(path, "unknown device '" + name + "'; built-in devices are " + known +
                        ", or give a device spec object or a .json/.yaml file");
}

DeviceSpec device_spec_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  DeviceSpec d;
  d.name = r.get_string("name");
  auto positive = [&](const char* key) {
    const double v = r.get_double(key);
    if (!(v > 0)) throw Error(r.path_of(key), "must be positive");
    return v;
  };
  d.peak_flops = positive("peak_flops");
  d.memory_bytes = positive("memory_bytes");
  d.memory_bandwidth = positive("memory_bandwidth");
  d.intra_node_bandwidth = positive("intra_node_bandwidth");
  d.inter_node_bandwidth = positive("inter_node_bandwidth");
  d.intra_node_latency = r.get_double("intra_node_latency", 10e-6);
  d.inter_node_latency = r.get_double("inter_node_latency", 20e-6);
  d.source = r.get_string("source", "user-supplied");
  d.nvlink_domain = int(r.get_int_in("nvlink_domain", 0, kMaxDevices, 0));
  r.finish();
  return d;
}

Json to_json(const DeviceSpec& d) {
  Json j{{"name", d.name},
         {"peak_flops", d.peak_flops},
         {"memory_bytes", d.memory_bytes},
         {"memory_bandwidth", d.memory_bandwidth},
         {"intra_node_bandwidth", d.intra_node_bandwidth},
         {"inter_node_bandwidth", d.inter_node_bandwidth},
         {"intra_node_latency", d.intra_node_latency},
         {"inter_node_latency", d.inter_node_latency},
         {"source", d.source}};
  if (d.nvlink_domain > 0) j["nvlink_domain"] = d.nvlink_domain;  // absent where a node is the domain
  return j;
}

Cluster cluster_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  Cluster c;
  c.devices_per_node = int(r.get_int_in("devices_per_node", 1, kMaxDevicesPerNode));
  const int64_t max_nodes = kMaxDevices / c.devices_per_node;
  if (r.has("nodes") && json_to_int(r.at("nodes"), r.path_of("nodes")) > max_nodes)
    throw Error(r.path_of("nodes"), "at most " + std::to_string(kMaxDevices) +
                                        " devices can be planned for (" + std::to_string(max_nodes) +
                                        " nodes of " + std::to_string(c.devices_per_node) +
                                        "): nodes must be in [1, " + std::to_string(max_nodes) + "]");
  c.n_nodes = int(r.get_int_in("nodes", 1, max_nodes));
  const Json& dev = r.at("device");
  const std::string dev_path = r.path_of("device");
  if (dev.is_object()) {
    c.device = device_spec_from_json(dev, dev_path);
  } else {
    const std::string name = json_to_string(dev, dev_path);
    const bool is_file = name.find('/') != std::string::npos || name.find(".json") != std::string::npos ||
                         name.find(".yaml") != std::string::npos;
    c.device = is_file ? device_spec_from_json(load_config_file(name), name) : builtin_device(name, dev_path);
  }
  const int domain = c.device.nvlink_domain;
  if (domain > 0 && c.n_devices() > domain)
    throw Error(
        r.path_of("nodes"),
        std::to_string(c.n_nodes) + " nodes of " + std::to_string(c.devices_per_node) + " are " +
            std::to_string(c.n_devices()) + " " + c.device.name +
            " devices, more than its NVLink domain of " + std::to_string(domain) +
            ": its inter-node link is NVLink within one domain, and realign does "
            "not price domains meeting over InfiniBand; at most " +
            std::to_string(domain / c.devices_per_node) +
            " nodes, or a device spec (cluster.device as an object or file) whose inter_node_bandwidth is "
            "the NIC's, to price every node's traffic over InfiniBand");
  r.finish();
  return c;
}

Json to_json(const Cluster& c) {
  return Json{{"nodes", c.n_nodes}, {"devices_per_node", c.devices_per_node}, {"device", to_json(c.device)}};
}

}  // namespace realign
