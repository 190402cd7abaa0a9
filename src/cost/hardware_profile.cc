#include "cost/hardware_profile.h"

#include <algorithm>
#include <cmath>

#include "core/config_file.h"
#include "cost/shipped_profiles.h"

namespace realign {

double Coefficient::at(double x) const {
  if (points.empty()) return value;
  const double last = points.back().second;
  double y = points.front().second;
  if (x >= points.back().first) {
    y = last;
  } else if (x > points.front().first) {
    size_t i = 1;
    while (points[i].first < x) ++i;
    const auto& [x0, y0] = points[i - 1];
    const auto& [x1, y1] = points[i];
    const double f = std::log(x / x0) / std::log(x1 / x0);
    y = y0 + f * (y1 - y0);
  }
  return value * y / last;
}

namespace {

// The coefficients that may be curves, over which variable. Each of them is an achieved rate (or a share of
// one) that grows with the size of the work and saturates, so its curve must not fall.
const char* curve_variable(const std::string& coefficient) {
  if (coefficient == "gemm_efficiency") return "gemm_rows";
  if (coefficient == "gemm_depth_efficiency") return "gemm_depth";
  if (coefficient == "attention_efficiency") return "sequence_length";
  if (coefficient == "decode_bandwidth_efficiency") return "bytes_read";
  if (coefficient == "intra_node_bandwidth" || coefficient == "inter_node_bandwidth" ||
      coefficient == "intra_node_alltoall_bandwidth")
    return "message_bytes";
  return nullptr;
}

void read_curve(ObjectReader& cr, const std::string& name, Coefficient& c) {
  const char* variable = curve_variable(name);
  const std::string of = cr.get_string("of");
  if (variable == nullptr) throw Error(cr.path_of("of"), name + " is a single number, not a curve");
  if (of != variable)
    throw Error(cr.path_of("of"), "a curve of " + name + " is over '" + variable + "', not '" + of + "'");
  const Json& pts = cr.at("points");
  const std::string ppath = cr.path_of("points");
  if (!pts.is_array() || pts.size() < 2)
    throw Error(ppath, "a curve needs a list of at least 2 [x, y] points");
  for (size_t i = 0; i < pts.size(); ++i) {
    const std::string ip = index_path(ppath, i);
    if (!pts[i].is_array() || pts[i].size() != 2 || !pts[i][0].is_number() || !pts[i][1].is_number())
      throw Error(ip, "a point is [x, y] with two numbers");
    const double x = pts[i][0].get<double>(), y = pts[i][1].get<double>();
    if (!std::isfinite(x) || !std::isfinite(y) || x <= 0 || y <= 0)
      throw Error(ip, "x and y must be positive numbers");
    if (i > 0 && x <= c.points.back().first)
      throw Error(ip, "x must increase from point to point (" + std::to_string(x) + " after " +
                          std::to_string(c.points.back().first) + ")");
    if (i > 0 && y < c.points.back().second)
      throw Error(ip, name + " must not fall as " + of + " grows (" + std::to_string(y) + " after " +
                          std::to_string(c.points.back().second) + ")");
    c.points.emplace_back(x, y);
  }
  c.of = of;
}

// The figures a profile of a built-in device may leave to the device's spec (plan/cluster.cc), which keeps
// them once: the peaks and the memory, as default_profile copies them.
bool from_device_spec(const std::string& coefficient) {
  return coefficient == "peak_flops" || coefficient == "memory_bandwidth" || coefficient == "memory_bytes";
}

// An engine's own coefficient per engine, `key`: {"<engine>": {"value": fraction, "source": "..."}, ...}.
void read_engine_efficiencies(ObjectReader& r, const char* key, std::map<std::string, Coefficient>& out) {
  const std::string path = r.path_of(key);
  const Json& all = r.at(key);
  if (!all.is_object())
    throw Error(path, "must be an object of engine name -> {value, source}, got " + json_type_name(all));
  for (const auto& [engine, entry] : all.items()) {
    ObjectReader er(entry, join_path(path, engine));
    Coefficient c{er.get_double("value"), er.get_string("source")};
    er.finish();
    if (!std::isfinite(c.value) || c.value <= 0 || c.value > 1)
      throw Error(er.path_of("value"), "a fraction in (0, 1]");
    if (c.source.find_first_not_of(" \t") == std::string::npos)
      throw Error(er.path_of("source"), "must say where the value comes from (the engine's published runs)");
    out[engine] = std::move(c);
  }
}

}  // namespace

std::vector<std::pair<const char*, const Coefficient*>> HardwareProfile::coefficients() const {
  return {{"peak_flops", &peak_flops},
          {"memory_bandwidth", &memory_bandwidth},
          {"memory_bytes", &memory_bytes},
          {"gemm_efficiency", &gemm_efficiency},
          {"gemm_depth_efficiency", &gemm_depth_efficiency},
          {"attention_efficiency", &attention_efficiency},
          {"decode_bandwidth_efficiency", &decode_bandwidth_efficiency},
          {"usable_memory_fraction", &usable_memory_fraction},
          {"pass_efficiency", &pass_efficiency},
          {"layer_launch_overhead_s", &layer_launch_overhead_s},
          {"decode_step_overhead_s", &decode_step_overhead_s},
          {"call_overhead_s", &call_overhead_s},
          {"step_overhead_s", &step_overhead_s},
          {"iteration_overhead_s", &iteration_overhead_s},
          {"compute_slots_per_node", &compute_slots_per_node},
          {"idle_worker_load", &idle_worker_load},
          {"intra_node_latency_s", &intra_node_latency_s},
          {"intra_node_bandwidth", &intra_node_bandwidth},
          {"intra_node_alltoall_bandwidth", &intra_node_alltoall_bandwidth},
          {"inter_node_latency_s", &inter_node_latency_s},
          {"inter_node_bandwidth", &inter_node_bandwidth},
          {"collective_overhead_s", &collective_overhead_s},
          {"oversubscribed_wait_s", &oversubscribed_wait_s},
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
  return engine_pass_efficiency == o.engine_pass_efficiency &&
         engine_decode_efficiency == o.engine_decode_efficiency && host_probe_s == o.host_probe_s;
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
  p.intra_node_alltoall_bandwidth = {d.intra_node_bandwidth,
                                     spec + ", the link's bandwidth as for an all-reduce"};
  p.inter_node_latency_s = {d.inter_node_latency, spec};
  p.inter_node_bandwidth = {d.inter_node_bandwidth, spec};
  // Uncalibrated defaults: typical achieved fractions reported for large-model training and serving.
  p.gemm_efficiency = {0.6,
                       "default: large bf16 GEMMs reach ~60% of dense peak (Megatron-LM reports 40-55% MFU "
                       "end to end, GEMMs alone higher); calibrate with `realign profile`"};
  p.gemm_depth_efficiency = {1.0,
                             "default: a GEMM's rate taken as independent of its depth; `realign profile` "
                             "measures it"};
  p.attention_efficiency = {0.4,
                            "default: FlashAttention-2 reaches ~35-50% of peak in the forward pass on "
                            "A100/H100 (Dao 2023); calibrate with `realign profile`"};
  p.decode_bandwidth_efficiency = {0.7,
                                   "default: memory-bound decode kernels reach ~60-80% of HBM bandwidth "
                                   "(vLLM/TensorRT-LLM reports); calibrate with `realign profile`"};
  p.pass_efficiency = {1.0,
                       "default: a pass runs at its kernels' rates; calibrate with `realign validate "
                       "--calibrate` (compute) or fit it to measured end-to-end figures"};
  p.usable_memory_fraction = {0.9,
                              "default: ~10% of device memory goes to the CUDA context, NCCL buffers and "
                              "allocator fragmentation"};
  p.layer_launch_overhead_s = {40e-6,
                               "default: ~10 kernels per transformer layer at ~4 us launch each without CUDA "
                               "graphs; calibrate with `realign profile`"};
  p.decode_step_overhead_s = {100e-6,
                              "default: ~100 us per decoding step to sample, check stop tokens and run the "
                              "host loop; calibrate with `realign validate --calibrate`"};
  p.call_overhead_s = {1e-3,
                       "default: ~1 ms to assemble a call's batch and set up its groups; calibrate with "
                       "`realign validate --calibrate`"};
  p.step_overhead_s = {2e-3,
                       "default: ~2 ms per optimizer step outside the matmuls (per-tensor Adam and clipping "
                       "kernels); calibrate with `realign validate --calibrate`"};
  p.iteration_overhead_s = {1e-3,
                            "default: ~1 ms per iteration for rewards, advantages and statistics outside the "
                            "calls; calibrate with `realign validate --calibrate`"};
  p.compute_slots_per_node = is_cpu_device(d)
                                 ? Coefficient{2,
                                               "default: the project's 2-core CPU machines "
                                               "(shared/LIBTORCH-NOTES.md); `realign profile` "
                                               "counts this machine's cores"}
                                 : Coefficient{1e6, "default: every accelerator computes on its own"};
  p.idle_worker_load = {1,
                        "default: a worker between calls takes a whole compute slot, as a computing one "
                        "does; `realign validate --calibrate` fits it"};
  p.collective_overhead_s = {0,
                             "default: none beyond the link latency, which then includes the host's share"};
  p.oversubscribed_wait_s = {d.intra_node_latency,
                             "default: the link's latency, a start for `realign validate --calibrate` to fit "
                             "(it matters only where a node's workers outnumber its compute slots)"};
  p.host_device_bandwidth = {25 * 1e9,
                             "default: PCIe Gen5 x16 achieves ~25 GB/s each way with pinned memory"};
  return p;
}

Json to_json(const HardwareProfile& p) {
  Json j;
  j["version"] = HardwareProfile::kVersion;
  j["device"] = p.device;
  for (const auto& [name, c] : p.coefficients()) {
    Json& cj = j[name] = Json{{"value", c->value}, {"source", c->source}};
    if (c->is_curve()) {
      cj["of"] = c->of;
      cj["points"] = Json::array();
      for (const auto& [x, y] : c->points) cj["points"].push_back({x, y});
    }
  }
  for (const auto& [engine, c] : p.engine_pass_efficiency)
    j["engine_pass_efficiency"][engine] = Json{{"value", c.value}, {"source", c.source}};
  for (const auto& [engine, c] : p.engine_decode_efficiency)
    j["engine_decode_efficiency"][engine] = Json{{"value", c.value}, {"source", c.source}};
  if (p.host_probe_s.value > 0)
    j["host_probe_s"] = Json{{"value", p.host_probe_s.value}, {"source", p.host_probe_s.source}};
  return j;
}

HardwareProfile hardware_profile_from_json(const Json& j, const std::string& path) {
  if (!j.is_object()) throw Error(path, "a hardware profile must be a JSON object, got " + json_type_name(j));
  ObjectReader r(j, path);
  if (!r.has("version"))
    throw Error(r.path_of("version"),
                "missing; this build reads profile version " + std::to_string(HardwareProfile::kVersion));
  const int64_t version = r.get_int("version");
  // Version 4 differs only by lacking gemm_depth_efficiency, version 5 also by lacking
  // intra_node_alltoall_bandwidth, version 6 by lacking oversubscribed_wait_s and idle_worker_load: a measured
  // or calibrated profile stays usable, priced as it was then (a GEMM's rate independent of its depth; an
  // all-to-all at the all-reduce's bandwidth; no wait beyond the latency's scaling, every worker of a node
  // loading it whole).
  const bool before_depth = version == 4;
  const bool before_alltoall = version == 4 || version == 5;
  const bool before_oversubscribed = version >= 4 && version <= 6;
  if (version != HardwareProfile::kVersion && !before_oversubscribed)
    throw Error(r.path_of("version"), "profile version " + std::to_string(version) + " is not the version " +
                                          std::to_string(HardwareProfile::kVersion) +
                                          " this build reads (nor 4 to 6); re-run `realign profile`");
  HardwareProfile p;
  p.device = r.get_string("device");
  const std::vector<std::string> builtin = builtin_device_names();
  const bool builtin_device_named = std::count(builtin.begin(), builtin.end(), p.device) > 0;
  for (auto& [name, c] : p.coefficients()) {
    if (from_device_spec(name) && !r.has(name) && builtin_device_named) {
      const HardwareProfile spec = default_profile(builtin_device(p.device, r.path_of("device")));
      for (const auto& [spec_name, figure] : spec.coefficients())
        if (std::string(spec_name) == name) *c = *figure;
      continue;
    }
    if (before_depth && std::string(name) == "gemm_depth_efficiency" && !r.has(name)) {
      *c = {1.0, "absent from this version-4 profile: a GEMM's rate independent of its depth"};
      continue;
    }
    if (before_alltoall && std::string(name) == "intra_node_alltoall_bandwidth" && !r.has(name))
      continue;  // set from intra_node_bandwidth once that is read
    if (before_oversubscribed && !r.has(name) &&
        (std::string(name) == "oversubscribed_wait_s" || std::string(name) == "idle_worker_load"))
      continue;  // set below
    if (!r.has(name))
      throw Error(r.path_of(name), from_device_spec(name)
                                       ? "missing coefficient (only a built-in device's profile may leave it "
                                         "to the device spec)"
                                       : "missing coefficient");
    ObjectReader cr(r.at(name), r.path_of(name));
    c->value = cr.get_double("value");
    c->source = cr.get_string("source");
    if (c->source.find_first_not_of(" \t") == std::string::npos)
      throw Error(cr.path_of("source"),
                  "must say where the value comes from (a measurement, a paper's "
                  "table, a vendor's benchmark)");
    if (cr.has("points") || cr.has("of")) read_curve(cr, name, *c);
    cr.finish();
    // An overhead on top of another coefficient may be absent (0); every rate and size must be positive.
    const bool may_be_zero = std::string(name) == "collective_overhead_s" ||
                             std::string(name) == "oversubscribed_wait_s" ||
                             std::string(name) == "idle_worker_load";
    if (!std::isfinite(c->value) || c->value < 0 || (c->value == 0 && !may_be_zero))
      throw Error(cr.path_of("value"), may_be_zero ? "must be a number >= 0" : "must be a positive number");
  }
  if (r.has("engine_pass_efficiency"))
    read_engine_efficiencies(r, "engine_pass_efficiency", p.engine_pass_efficiency);
  if (r.has("engine_decode_efficiency"))
    read_engine_efficiencies(r, "engine_decode_efficiency", p.engine_decode_efficiency);
  if (r.has("host_probe_s")) {
    ObjectReader cr(r.at("host_probe_s"), r.path_of("host_probe_s"));
    p.host_probe_s = {cr.get_double("value"), cr.get_string("source")};
    cr.finish();
    if (!std::isfinite(p.host_probe_s.value) || p.host_probe_s.value <= 0)
      throw Error(cr.path_of("value"), "must be a positive number of seconds");
    if (p.host_probe_s.source.find_first_not_of(" \t") == std::string::npos)
      throw Error(cr.path_of("source"), "must say which machine the probe ran on");
  }
  r.finish();
  if (before_alltoall && !r.has("intra_node_alltoall_bandwidth")) {
    p.intra_node_alltoall_bandwidth = p.intra_node_bandwidth;
    p.intra_node_alltoall_bandwidth.source = "absent from this version-" + std::to_string(version) +
                                             " profile: intra_node_bandwidth (" +
                                             p.intra_node_bandwidth.source + ")";
  }
  if (before_oversubscribed && !r.has("oversubscribed_wait_s"))
    p.oversubscribed_wait_s = {
        0, "absent from this version-" + std::to_string(version) +
               " profile: no wait beyond the latency's scaling, as that version priced it"};
  if (before_oversubscribed && !r.has("idle_worker_load"))
    p.idle_worker_load = {1, "absent from this version-" + std::to_string(version) +
                                 " profile: a whole slot, as that version priced it"};
  for (const char* fraction :
       {"gemm_efficiency", "gemm_depth_efficiency", "attention_efficiency", "decode_bandwidth_efficiency",
        "usable_memory_fraction", "pass_efficiency", "idle_worker_load"})
    for (const auto& [name, c] : p.coefficients())
      if (std::string(name) == fraction && c->value > 1.0)
        throw Error(join_path(join_path(path, name), "value"), "a fraction must be at most 1");
  return p;
}

HardwareProfile load_hardware_profile(const std::string& file) {
  return hardware_profile_from_json(load_config_file(file), file);
}

std::vector<std::string> shipped_profile_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : shipped_profiles()) names.push_back(name);
  return names;
}

bool has_shipped_profile(const DeviceSpec& device) {
  const std::vector<std::string> shipped = shipped_profile_names(), builtin = builtin_device_names();
  // A spec edited away from the built-in device of its name describes other hardware: the shipped figures
  // do not apply to it.
  return std::count(shipped.begin(), shipped.end(), device.name) &&
         std::count(builtin.begin(), builtin.end(), device.name) &&
         builtin_device(device.name, "device") == device;
}

HardwareProfile builtin_profile(const DeviceSpec& device) {
  if (!has_shipped_profile(device)) return default_profile(device);
  // Read as `profile=profiles/<name>.json` reads the file: the device spec's peaks and memory, which a
  // shipped profile does not restate, come from plan/cluster.cc.
  for (const auto& [name, text] : shipped_profiles())
    if (name == device.name)
      return hardware_profile_from_json(Json::parse(text), "profiles/" + name + ".json");
  return default_profile(device);
}

}  // namespace realign
