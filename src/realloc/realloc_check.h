// Reallocation check: runs one TransferPlan over a group with source shards cut from known full parameters,
// and verifies every destination shard bit-for-bit (FNV-1a checksums) against a direct slice of the same full
// parameters. Used by `realign realloc-check`, the multi-process tests and bench/realloc.
// Full parameters come from a SliceSource: a loaded checkpoint (full tensors by canonical name) or
// synthetic values, a pure function of (seed, name, flat element index), so a rank can make any slice of a
// large model without materialising the whole of it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "comm/group.h"
#include "realloc/realloc_executor.h"

namespace realign {

// The slice `range` along slice_dim(param) of the full parameter, contiguous, in `dtype`.
using SliceSource = std::function<at::Tensor(const ParamInfo& param, const Range& range, at::ScalarType dtype)>;

SliceSource synthetic_params(uint64_t seed);
// Full tensors by canonical name; throws realign::Error naming a missing parameter or a wrong shape.
SliceSource full_params(std::map<std::string, at::Tensor> tensors);

// The shards `device` holds in `layout` (empty outside it).
ShardMap make_shards(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& layout, int device,
                     const SliceSource& source, at::ScalarType dtype);

// Compares `shards` with what `device` should hold in `layout`; one line per mismatch (missing, extra,
// wrong shape or dtype, different bytes with both checksums and the first differing element).
std::vector<std::string> verify_shards(const std::vector<ParamInfo>& params, int64_t n_layers,
                                       const Layout& layout, int device, const ShardMap& shards,
                                       const SliceSource& source, at::ScalarType dtype);

struct CheckResult {
  bool ok = false;
  int64_t bytes_moved = 0;    // the plan's wire bytes
  int64_t bytes_minimum = 0;  // what destinations need and do not hold
  int64_t bytes_received = 0;  // measured: summed over ranks
  int64_t bytes_copied = 0;    // local copies, summed over ranks
  int64_t messages = 0;        // summed over ranks (each message counted at both ends)
  int64_t shards_checked = 0;
  int64_t mismatches = 0;
  double seconds = 0;  // the slowest rank's executor time
  double gbps() const { return seconds > 0 ? double(bytes_moved) / seconds / 1e9 : 0.0; }
};

// Collective over `group` (rank r = device r; every rank calls it): builds the plan and the source shards,
// times execute_reallocation between barriers, verifies. Each rank prints its mismatches to stderr.
CheckResult run_realloc_check(comm::Group& group, const std::vector<ParamInfo>& params, int64_t n_layers,
                              const Layout& from, const Layout& to, const SliceSource& source,
                              at::ScalarType dtype, const ReallocOptions& options = {});

}  // namespace realign
