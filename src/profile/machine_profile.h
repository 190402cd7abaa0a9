// `realign profile`: measures the machine at hand (GEMMs of transformer shapes, attention, memory bandwidth,
// memory-bound decode steps, per-layer launch overhead) and turns the figures into a HardwareProfile whose
// every coefficient says where it came from.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "cost/hardware_profile.h"

namespace realign::profile {

// Times the named operation; the default runs it (time_op). Tests pass a table of fake times instead, so that
// calibration can be checked without timing anything.
using OpTimer = std::function<double(const std::string& name, const std::function<void()>& op)>;

struct ProfileOptions {
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;  // the dtype the runtime computes in on this device
  bool quick = false;                 // smaller shapes, for tests
  OpTimer timer;                      // empty: really time the ops
};

// One measured figure, kept for the report printed beside the profile.
struct Measurement {
  std::string name;    // "gemm 2048x1024x1024"
  double seconds = 0;
  double rate = 0;     // FLOP/s or bytes/s
  std::string unit;    // "FLOP/s", "B/s"
};

struct MachineProfile {
  HardwareProfile profile;
  std::vector<Measurement> measurements;
};

// `progress(done, total, what)` is called before each measurement.
using ProgressFn = std::function<void(int, int, const std::string&)>;

// Starts from default_profile(device_spec) and replaces the coefficients it measures: gemm_efficiency,
// gemm_depth_efficiency (a curve), attention_efficiency, memory_bandwidth, decode_bandwidth_efficiency,
// layer_launch_overhead_s (peak_flops stays the device spec's, so efficiencies are fractions of it). Link
// figures stay as they were.
MachineProfile measure_machine(const DeviceSpec& device_spec, const ProfileOptions& options,
                               const ProgressFn& progress = nullptr);

}  // namespace realign::profile
