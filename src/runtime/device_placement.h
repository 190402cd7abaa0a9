// DevicePlacement: where one rank's models live and in which precision, decided once per rank, here alone
// (the CTranslate2 rule: the model, the runtime and the optimizer follow the tensors they are given and never
// test for a GPU themselves). Inputs: the cluster's device, train.device, train.dtype, the CUDA devices this
// process sees and its local rank.
// - A GPU cluster (cluster.device not a cpu one, plan/cluster.h is_cpu_device) with CUDA devices here: the
// rank
//   runs on cuda:(LOCAL_RANK mod devices) in bf16 with fp32 master weights and fp32 AdamW moments, the layout
//   the plan's memory model prices (cost/memory_model.h: 2 + 2 + 12 bytes per trained parameter); train.dtype
//   is for CPU runs. More local ranks than GPUs share them round-robin (over Gloo through host memory).
// - A GPU cluster without CUDA here: the CPU in train.dtype, as realign ran before GPUs existed for it, with
// a
//   note saying so; train.device=cuda makes that an error instead.
// - A CPU cluster: the CPU in train.dtype, exactly as before (train.device=cuda still puts it on a GPU).
// Torch-free (runtime_base); runtime/model_shape.h turns it into an at::Device and dtype.
#pragma once

#include <string>

#include "plan/cluster.h"

namespace realign::runtime {

struct DevicePlacement {
  bool cuda = false;
  int cuda_index = 0;          // cuda:cuda_index when cuda
  std::string dtype = "fp32";  // parameters and activations: fp32 | bf16
  bool fp32_master = false;    // bf16 parameters updated through fp32 master copies (runtime/adamw.h)
  std::string note;            // why the rank runs elsewhere than the config names; empty when it does not
  bool operator==(const DevicePlacement& o) const {
    return cuda == o.cuda && cuda_index == o.cuda_index && dtype == o.dtype && fp32_master == o.fp32_master &&
           note == o.note;
  }
};

// The rule above. `cuda_devices`: the CUDA devices this process sees (0 with a CPU libtorch); `libtorch`: its
// version, for messages. Throws Error naming train.device when it asks for cuda and there is none.
DevicePlacement place_rank(const DeviceSpec& cluster_device, const std::string& train_device,
                           const std::string& train_dtype, int cuda_devices, int local_rank, int local_ranks,
                           const std::string& libtorch);

// "cpu, fp32" or "cuda:0, bf16 with fp32 master weights".
std::string describe(const DevicePlacement& p);

}  // namespace realign::runtime
