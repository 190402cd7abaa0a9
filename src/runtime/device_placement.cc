#include "runtime/device_placement.h"

#include "core/error.h"

namespace realign::runtime {

DevicePlacement place_rank(const DeviceSpec& cluster_device, const std::string& train_device,
                           const std::string& train_dtype, int cuda_devices, int local_rank, int local_ranks,
                           const std::string& libtorch) {
  if (train_device != "auto" && train_device != "cpu" && train_device != "cuda")
    throw Error("train.device", "'" + train_device + "' is not a device: valid values: auto, cpu, cuda");
  const std::string none_here = "this process sees no CUDA device (libtorch " + libtorch + ")";
  if (train_device == "cuda" && cuda_devices <= 0)
    throw Error("train.device", "cuda: " + none_here + "; valid values: auto, cpu, cuda");
  DevicePlacement cpu;
  cpu.dtype = train_dtype;
  const bool gpu_cluster = !is_cpu_device(cluster_device);
  if (train_device == "cpu" || (train_device == "auto" && !gpu_cluster)) return cpu;
  if (cuda_devices <= 0) {
    cpu.note = "cluster.device " + cluster_device.name + " is a GPU, but " + none_here +
               ": running on the CPU in " + train_dtype + " (train.device=cuda makes this an error)";
    return cpu;
  }
  DevicePlacement gpu;
  gpu.cuda = true;
  gpu.cuda_index = local_rank % cuda_devices;
  gpu.dtype = "bf16";
  gpu.fp32_master = true;
  if (local_ranks > cuda_devices)
    gpu.note = std::to_string(local_ranks) + " local ranks share " + std::to_string(cuda_devices) +
               " CUDA device(s) round-robin, communicating over Gloo through host memory";
  return gpu;
}

std::string describe(const DevicePlacement& p) {
  if (!p.cuda) return "cpu, " + p.dtype;
  return "cuda:" + std::to_string(p.cuda_index) + ", " + p.dtype +
         (p.fp32_master ? " with fp32 master weights" : "");
}

}  // namespace realign::runtime
