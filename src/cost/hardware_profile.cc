#include "cost/hardware_profile.h"

#include <cmath>

#include "core/config_file.h"

namespace realign {

std::vector<std::pair<const char*, const Coefficient*>> HardwareProfile::coefficients() const {
  return {{"peak_flops", &peak_flops},
          {"memory_bandwidth", &memory_bandwidth},
          {"memory_bytes", &memory_bytes},
          {"gemm_efficiency", &gemm_efficiency},
          {"attention_efficiency", &attention_efficiency},
          {"decode_bandwidth_efficiency", &decode_bandwidth_efficiency},
          {"usable_memory_fraction", &usable_memory_fraction},
          {"layer_launch_overhead_s", &layer_launch_overhead_s},
          {"call_overhead_s", &call_overhead_s},
          {"step_overhead_s", &step_overhead_s},
          {"iteration_overhead_s", &iteration_overhead_s},
          {"compute_slots_per_node", &compute_slots_per_node},
          {"intra_node_latency_s", &intra_node_latency_s},
          {"intra_node_bandwidth", &intra_node_bandwidth},
          {"inter_node_latency_s", &inter_node_latency_s},
          {"inter_node_bandwidth", &inter_node_bandwidth},
          {"host_device_bandwidth", &host_device_bandwidth}};
}

std::vector<std::pair<const char*, Coefficient*>> HardwareProfile::coefficients() {
  std::vector<std::pair<const char*, Coefficient*>> out;
  for (const auto& [name, c] : static_cast<const HardwareProfile&>(*this).coefficients())
    out.emplace_back(name, const_cast<Coefficient*>(c));
  return out;
}

bool HardwareProfile::operator==(const HardwareProfile& o) const {
  if (device != o.device) return false;
  const auto a = coefficients(), b = o.coefficients();
  for (size_t i = 0; i < a.size(); ++i)
    if (!(*a[i].second == *b[i].second)) return false;
  return true;
}

HardwareProfile default_profile(const DeviceSpec& d) {
  HardwareProfile p;
  p.device = d.name;
  const std::string spec = "device spec '" + d.name + "' (" + d.source + ")";
  p.peak_flops = {d.peak_flops, spec};
  p.memory_bandwidth = {d.memory_bandwidth, spec};
  p.memory_bytes = {d.memory_bytes, spec};
  p.intra_node_latency_s = {d.intra_node_latency, spec};
  p.intra_node_bandwidth = {d.intra_node_bandwidth, spec};
  p.inter_node_latency_s = {d.inter_node_latency, spec};
  p.inter_node_bandwidth = {d.inter_node_bandwidth, spec};
  // Uncalibrated defaults: typical achieved fractions reported for large-model training and serving.
  p.gemm_efficiency = {0.6,
                       "default: large bf16 GEMMs reach ~60% of dense peak (Megatron-LM reports 40-55% MFU "
                       "end to end, GEMMs alone higher); calibrate with `realign profile`"};
  p.attention_efficiency = {0.4,
                            "default: FlashAttention-2 reaches ~35-50% of peak in the forward pass on "
                            "A100/H100 (Dao 2023); calibrate with `realign profile`"};
  p.decode_bandwidth_efficiency = {0.7,
                                   "default: memory-bound decode kernels reach ~60-80% of HBM bandwidth "
                                   "(vLLM/TensorRT-LLM reports); calibrate with `realign profile`"};
  p.usable_memory_fraction = {0.9,
                              "default: ~10% of device memory goes to the CUDA context, NCCL buffers and "
                              "allocator fragmentation"};
  p.layer_launch_overhead_s = {40e-6,
                               "default: ~10 kernels per transformer layer at ~4 us launch each without CUDA "
                               "graphs; calibrate with `realign profile`"};
  p.call_overhead_s = {1e-3,
                       "default: ~1 ms to assemble a call's batch and set up its groups; calibrate with "
                       "`realign validate --calibrate`"};
  p.step_overhead_s = {2e-3,
                       "default: ~2 ms per optimizer step outside the matmuls (per-tensor Adam and clipping "
                       "kernels); calibrate with `realign validate --calibrate`"};
  p.iteration_overhead_s = {1e-3,
                            "default: ~1 ms per iteration for rewards, advantages and statistics outside the "
                            "calls; calibrate with `realign validate --calibrate`"};
  p.compute_slots_per_node = d.name.rfind("cpu", 0) == 0
                                 ? Coefficient{2,
                                               "default: the project's 2-core CPU machines "
                                               "(shared/LIBTORCH-NOTES.md); `realign profile` "
                                               "counts this machine's cores"}
                                 : Coefficient{1e6, "default: every accelerator computes on its own"};
  p.host_device_bandwidth = {25 * 1e9,
                             "default: PCIe Gen5 x16 achieves ~25 GB/s each way with pinned memory"};
  return p;
}

Json to_json(const HardwareProfile& p) {
  Json j;
  j["version"] = HardwareProfile::kVersion;
  j["device"] = p.device;
  for (const auto& [name, c] : p.coefficients()) j[name] = Json{{"value", c->value}, {"source", c->source}};
  return j;
}

HardwareProfile hardware_profile_from_json(const Json& j, const std::string& path) {
  if (!j.is_object()) throw Error(path, "a hardware profile must be a JSON object, got " + json_type_name(j));
  ObjectReader r(j, path);
  if (!r.has("version"))
    throw Error(r.path_of("version"),
                "missing; this build reads profile version " + std::to_string(HardwareProfile::kVersion));
  const int64_t version = r.get_int("version");
  if (version != HardwareProfile::kVersion)
    throw Error(r.path_of("version"), "profile version " + std::to_string(version) + " is not the version " +
                                          std::to_string(HardwareProfile::kVersion) +
                                          " this build reads; re-run `realign profile`");
  HardwareProfile p;
  p.device = r.get_string("device");
  for (auto& [name, c] : p.coefficients()) {
    if (!r.has(name)) throw Error(r.path_of(name), "missing coefficient");
    ObjectReader cr(r.at(name), r.path_of(name));
    c->value = cr.get_double("value");
    c->source = cr.get_string("source");
    cr.finish();
    if (!std::isfinite(c->value) || c->value <= 0)
      throw Error(cr.path_of("value"), "must be a positive number");
  }
  r.finish();
  for (const char* fraction :
       {"gemm_efficiency", "attention_efficiency", "decode_bandwidth_efficiency", "usable_memory_fraction"})
    for (const auto& [name, c] : p.coefficients())
      if (std::string(name) == fraction && c->value > 1.0)
        throw Error(join_path(join_path(path, name), "value"), "a fraction must be at most 1");
  return p;
}

HardwareProfile load_hardware_profile(const std::string& file) {
  return hardware_profile_from_json(load_config_file(file), file);
}

}  // namespace realign
