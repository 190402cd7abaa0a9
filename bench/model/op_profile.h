// Where a step's time goes, op by op: torch's (legacy) CPU profiler around a piece of work, each op's self
// time (its time minus the ops it called), so that a matmul inside an autograd node counts once, as a matmul.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bench {

struct OpTime {
  double self_s = 0;
  long calls = 0;
};

// One GEMM as the work ran it: the op and its inputs' shapes.
struct GemmCall {
  std::string op;
  std::vector<std::vector<int64_t>> shapes;
};

struct OpProfile {
  std::map<std::string, OpTime> ops;  // by name ("aten::mm", "MmBackward0")
  std::vector<GemmCall> gemms;        // in order
};

// Runs `work` under the profiler (libtorch 1.x: core/torch_compat.h REALIGN_TORCH_HAS_LEGACY_PROFILER).
OpProfile profile_ops(const std::function<void()>& work);

// Runs the GEMMs again, alone, on fresh contiguous operands of the same shapes, and returns the seconds they
// take: the time the work could not go below at this machine's GEMM speed for those shapes. Unlike the
// profile's own times, nothing is added per op.
double replay_seconds(const std::vector<GemmCall>& gemms);

// The GEMM family (mm, addmm, bmm, matmul's kernels, linear's): the ops that do the FLOPs bench_model counts.
bool is_gemm(const std::string& op);

}  // namespace bench
