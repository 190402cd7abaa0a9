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

// The shapes measure_machine times, chosen in one place by device and `quick` (shape_set). A CPU's are small
// enough to take seconds; a GPU's are transformer-sized, so that the kernels and not their launch set the
// time (each shape's tensors stay under ~8 GiB).
struct ShapeSet {
  struct Gemm {
    int64_t m, k, n;
  };
  struct Attention {
    int64_t batch, heads, seq, head_dim;
  };
  struct Decode {
    int64_t batch, context;
  };
  std::vector<Gemm> gemms;  // token-by-hidden products: the median is gemm_efficiency
  // The depth sweep: sweep_rows x K x sweep_cols for each K of `depths` (ascending), relative to the deepest.
  int64_t sweep_rows = 0, sweep_cols = 0;
  std::vector<int64_t> depths;
  std::vector<Attention> attentions;  // causal
  // Timed as the runtime runs attention there: the libtorch's fused kernel (a GPU with a libtorch that has
  // one), else the unfused matmul-softmax-matmul.
  bool fused_attention = false;
  int64_t copy_bytes = 0;  // the tensor copied for memory_bandwidth
  // Decode steps: a token per sequence through a decode_hidden x 4*decode_hidden weight and a KV cache of
  // decode_hidden / decode_head_dim heads.
  int64_t decode_hidden = 0, decode_head_dim = 0;
  std::vector<Decode> decodes;
  // The layer whose forward gives layer_launch_overhead_s: a built-in model's (its vocabulary replaced by
  // launch_vocab unless 0), described as launch_layer ("tiny": "one tiny transformer layer forward").
  std::string launch_model, launch_layer;
  int64_t launch_vocab = 0;
};

// The shape set for `device` (CPU or CUDA), quick or not.
ShapeSet shape_set(const at::Device& device, bool quick);

// `progress(done, total, what)` is called before each measurement.
using ProgressFn = std::function<void(int, int, const std::string&)>;

// Starts from default_profile(device_spec) and replaces the coefficients it measures: gemm_efficiency,
// gemm_depth_efficiency (a curve), attention_efficiency, memory_bandwidth, decode_bandwidth_efficiency,
// layer_launch_overhead_s (peak_flops stays the device spec's, so efficiencies are fractions of it). Link
// figures stay as they were.
MachineProfile measure_machine(const DeviceSpec& device_spec, const ProfileOptions& options,
                               const ProgressFn& progress = nullptr);

}  // namespace realign::profile
