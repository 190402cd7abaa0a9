// HardwareProfile: the calibratable coefficients of the cost model (achieved fractions of peak, launch
// overheads, alpha-beta link figures), each with the source it came from. `realign profile` measures them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "plan/cluster.h"

namespace realign {

// A coefficient is one number, or a curve over one variable (`of`: "gemm_rows", "message_bytes", ...) given
// by measured points and interpolated linearly in log x, clamped at the ends. `value` is the coefficient at
// the curve's last point (large sizes); at(x) = value * y(x) / y(last), so calibration, which scales
// `value`, scales the whole curve and keeps its measured shape.
struct Coefficient {
  Coefficient() = default;
  Coefficient(double v, std::string src) : value(v), source(std::move(src)) {}
  double value = 0;
  std::string source;  // "default: ..." or "measured by realign profile on ..." or a paper's table
  std::string of;      // the curve's variable; empty for a plain number
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
  double at(double x) const;
  bool is_curve() const { return !points.empty(); }
  bool operator==(const Coefficient& o) const {
    return value == o.value && source == o.source && of == o.of && points == o.points;
  }
};

struct HardwareProfile {
  static constexpr int kVersion = 7;  // 2: call_overhead_s, step_overhead_s, compute_slots_per_node;
                                      // 3: iteration_overhead_s; 4: decode_step_overhead_s, curves;
                                      // 5: gemm_depth_efficiency; 6: intra_node_alltoall_bandwidth;
                                      // 7: oversubscribed_wait_s, idle_worker_load
  std::string device;                 // the DeviceSpec name it describes

  // Device peaks (copied from the DeviceSpec so a profile stands alone).
  Coefficient peak_flops;        // FLOP/s, dense bf16
  Coefficient memory_bandwidth;  // bytes/s
  Coefficient memory_bytes;      // bytes per device

  // Achieved fractions.
  Coefficient gemm_efficiency;  // of peak_flops, dense matmuls
  // A GEMM's rate relative to gemm_efficiency's by its depth K (the reduction over which it multiplies, after
  // the tensor-parallel split): a row-parallel matmul over hidden / tp inputs has a short inner loop per
  // output tile and runs further from peak. 1 at the depth gemm_efficiency was measured at.
  Coefficient gemm_depth_efficiency;
  Coefficient attention_efficiency;         // of peak_flops, attention scores and values
  Coefficient decode_bandwidth_efficiency;  // of memory_bandwidth, memory-bound kernels (decode, optimizer)
  Coefficient usable_memory_fraction;       // of memory_bytes (allocator fragmentation, CUDA context)
  // Share of the kernels' rates (gemm_efficiency, attention_efficiency) that a training or inference engine
  // keeps over a whole batched pass (forward, backward, prefill): the non-GEMM kernels, the framework's own
  // work, synchronisation. Decoding steps are priced by their kernels, memory traffic and launches instead.
  Coefficient pass_efficiency;

  // Fixed costs.
  Coefficient layer_launch_overhead_s;  // kernel launches of one transformer layer's forward, seconds
  // Fixed cost of one decoding step of one micro-batch outside the layers: sampling, the stop check, the host
  // loop and its synchronisation with the device (engines without CUDA graphs pay it every token).
  Coefficient decode_step_overhead_s;
  Coefficient call_overhead_s;  // fixed cost of one call: batch assembly, tokenisation, set-up, seconds
  Coefficient step_overhead_s;  // fixed cost of one optimizer step: zeroing, clipping, the step loop
  // Fixed cost of one iteration outside the calls, on every device: the trainer's own work on the batch
  // (rewards, advantages, statistics) and the rows' way through it between calls.
  Coefficient iteration_overhead_s;
  // Ranks of one node that compute at full speed at once: CPU workers share the node's cores (a call on more
  // ranks than cores runs proportionally slower); accelerators compute independently (a huge value).
  Coefficient compute_slots_per_node;
  // Share of a compute slot that a worker of the node takes while it runs no call (waiting for its next
  // one: polling, the trainer's own work), between 0 (it sleeps) and 1 (as much as a computing worker). The
  // node's load during a call, and so how far every rank of the call slows down, is its busy ranks plus
  // this share of the others, over compute_slots_per_node (cost/call_cost.cc).
  Coefficient idle_worker_load;

  // Links: alpha (seconds per message) and beta (bytes/s per device, one direction).
  Coefficient intra_node_latency_s;
  Coefficient intra_node_bandwidth;
  // The same link under an all-to-all (a mixture-of-experts layer's dispatch and combine): every device
  // sends to every other at once, without the in-switch reduction (NVLink SHARP) that lifts an all-reduce's
  // bus bandwidth; a curve over message size like intra_node_bandwidth. Across nodes an all-to-all runs at
  // inter_node_bandwidth (one NIC per GPU).
  Coefficient intra_node_alltoall_bandwidth;
  Coefficient inter_node_latency_s;
  Coefficient inter_node_bandwidth;
  // Fixed cost of one collective or send/recv as an eager engine issues it (the framework's call, NCCL's
  // enqueue and launch), on top of the link's own latency; it makes tensor parallelism costly when decoding.
  Coefficient collective_overhead_s;
  // Workers that share a node's compute slots (CPU cores) take turns. Where more of a call's ranks exchange
  // the same messages at the same moments than the node has slots (two tp groups' collectives in lockstep on
  // 2 cores), each such message waits this much longer per unit of that oversubscription (ranks / slots - 1),
  // on top of the link latency's scaling by the node's busy ranks (cost/call_cost.cc). Never on
  // accelerators, each of which computes on its own.
  Coefficient oversubscribed_wait_s;
  Coefficient host_device_bandwidth;  // bytes/s per device: loading an offloaded model's shards

  // An RL engine's own share of the kernels' rates over its batched passes (pass_efficiency's meaning) on
  // this device, where the engine's published runs give one: engine name ("nemo-rl") -> fraction. Pricing a
  // plan as that engine runs it (engines/pricing.h) takes it in place of pass_efficiency, which is fitted
  // to ReaL's engine; an engine without an entry keeps pass_efficiency. Optional in a profile's JSON.
  std::map<std::string, Coefficient> engine_pass_efficiency;
  // The share of decode_bandwidth_efficiency's rate an engine's serving reaches while decoding on this device,
  // where the engine's published runs give one (its MoE kernels at a decoding batch's few tokens per expert,
  // its sampling and scheduling): engine name -> fraction, multiplying decode_bandwidth_efficiency (each
  // point of a curve) when pricing generation as that engine runs it. Optional in a profile's JSON.
  std::map<std::string, Coefficient> engine_decode_efficiency;

  // The host probe's time (profile/host_probe.h: a fixed piece of realign's own small-model work on one
  // thread) on the machine this CPU profile's coefficients describe; 0 where none was recorded (the GPU
  // profiles). Another machine's probe time over it scales the profile to that machine
  // (cost/host_scaling.h). Optional in a profile's JSON.
  Coefficient host_probe_s;

  // Every coefficient with its JSON name, in a fixed order (JSON I/O and `explain` iterate over this).
  std::vector<std::pair<const char*, const Coefficient*>> coefficients() const;
  std::vector<std::pair<const char*, Coefficient*>> coefficients();

  bool operator==(const HardwareProfile& o) const;
};

// Derives a profile from a device spec with stated default efficiencies.
HardwareProfile default_profile(const DeviceSpec& device);
// The profile realign ships for a built-in device (profiles/<name>.json: H100 and A100 coefficients from
// published measurements, each citing its source), else default_profile. A shipped file is read as
// `profile=profiles/<name>.json` reads it (hardware_profile_from_json): every coefficient is in the file,
// except that it may leave the device spec's peaks and memory to the spec. A device spec that differs from
// the built-in one of its name gets default_profile.
HardwareProfile builtin_profile(const DeviceSpec& device);
// Names of the devices with a shipped profile, and whether builtin_profile uses one for `device`.
std::vector<std::string> shipped_profile_names();
bool has_shipped_profile(const DeviceSpec& device);

// {"version": 4, "device": "...", "<coefficient>": {"value": x, "source": "..."}, ...}; a curve adds
// "of": "<variable>", "points": [[x, y], ...] (value: y at the last point).
Json to_json(const HardwareProfile& profile);
// Reads versions 4 to 6 too (gemm_depth_efficiency then 1; intra_node_alltoall_bandwidth then the
// all-reduce's intra_node_bandwidth; oversubscribed_wait_s then 0 and idle_worker_load 1, as those
// versions priced them). A profile of a built-in device ("device": "h100-sxm") may leave out peak_flops,
// memory_bandwidth and memory_bytes: they are the device spec's (plan/cluster.cc), as the shipped profiles
// keep them. Throws Error naming the field: another version, a missing or unknown coefficient, a bad value,
// a missing source, a curve whose x does not increase or that is not monotone where it must be
// (efficiencies and bandwidths do not fall as sizes grow).
HardwareProfile hardware_profile_from_json(const Json& j, const std::string& path);
HardwareProfile load_hardware_profile(const std::string& file);

}  // namespace realign
