// torch_compat: every difference between the libtorches realign builds against, in one header: Debian's
// libtorch 1.13 (CPU; CI) and a current PyTorch's (2.x with CUDA, the one inside its wheel). Header only and
// included only by the torch modules (comm, model, runtime, profile, train, apps, bench): realign_core itself
// never includes it and links no torch. What differs, and what realign does about it:
// - Fused attention: at::scaled_dot_product_attention is public from 2.0 (flash / memory-efficient kernels on
//   CUDA); 1.13 has none, so model/attention.cc keeps its matmul + softmax there (and on the CPU everywhere,
//   so CPU results do not depend on the libtorch).
// - c10d backends: ProcessGroupGloo.hpp is empty unless USE_C10D_GLOO is defined (comm's CMakeLists defines
//   it) and includes gloo's own headers, which Debian ships (libgloo-dev) and a PyPI wheel may not; then comm
//   builds without Gloo and a run of several ranks is refused naming the cause. ProcessGroupNCCL exists only
//   in CUDA builds; realign builds no NCCL groups yet (docs/ARCHITECTURE.md says why). In 2.x
//   both are c10d::Backends under a ProcessGroup; realign holds the backend itself, whose collectives
//   (allreduce, allgather, broadcast, send/recv, alltoall_base, barrier) and Options keep 1.13's signatures.
// - torch's legacy profiler (bench/model --profile) is 1.13's; 2.x moved profiling to Kineto.
// - CUDA queries (torch/cuda.h) exist in both; a CPU build answers "no devices".
#pragma once

#include <torch/cuda.h>
#include <torch/version.h>

#define REALIGN_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#define REALIGN_TORCH_HAS_SDPA REALIGN_TORCH_AT_LEAST(2, 0)
#define REALIGN_TORCH_HAS_LEGACY_PROFILER (!REALIGN_TORCH_AT_LEAST(2, 0))

#if defined(USE_C10D_GLOO) && __has_include(<gloo/algorithm.h>)
#define REALIGN_TORCH_HAS_GLOO 1
#else
#define REALIGN_TORCH_HAS_GLOO 0
#endif

#if REALIGN_TORCH_HAS_SDPA
#include <ATen/ops/scaled_dot_product_attention.h>
#endif

#include <ATen/core/Tensor.h>

#include "core/check.h"

namespace realign::torch_compat {

constexpr const char* kVersion = TORCH_VERSION;
constexpr bool kHasFusedAttention = REALIGN_TORCH_HAS_SDPA;

// CUDA devices this process sees (0 for a CPU libtorch or a machine without a GPU).
inline int cuda_device_count() { return torch::cuda::is_available() ? int(torch::cuda::device_count()) : 0; }

// Waits for the work queued on a CUDA device (a no-op for the CPU, whose ops return when done).
inline void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// Attention through the libtorch's fused kernel: q (B, H, Tq, d), k and v (B, H, Tk, d) with as many heads as
// q, mask broadcastable to (B, H, Tq, Tk) bool (true = may attend). Only where kHasFusedAttention.
inline at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& mask) {
#if REALIGN_TORCH_HAS_SDPA
  return at::scaled_dot_product_attention(q, k, v, mask, /*dropout_p=*/0.0, /*is_causal=*/false);
#else
  REALIGN_CHECK(false) << "libtorch " << kVersion << " has no fused attention" << q.sizes() << k.sizes()
                       << v.sizes() << mask.sizes();
  return at::Tensor();
#endif
}

}  // namespace realign::torch_compat
