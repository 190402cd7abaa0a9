// AdamW (Loshchilov & Hutter) over one rank's parameter shards, with a linear warm-up then cosine (or
// constant) learning-rate schedule. Its whole state (moments, step count) is plain tensors, so checkpoints
// restore it exactly and a resumed run takes bit-identical steps. With OptimConfig::fp32_master, parameters
// that are not fp32 (bf16 on a GPU) are stepped through fp32 master copies made from them at the first step
// (after whatever the trainer loads into them); checkpoints hold the parameters, not the masters, so a
// resumed GPU run restarts its masters from the saved bf16 weights. With OptimConfig::zero1 over a dp group
// of 2+ ranks, step_zero1 keeps only this rank's share of the moments (ZeRO stage 1, see adamw_zero1.cc).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/group.h"
#include "runtime/optim_config.h"

namespace realign::runtime {

// The learning rate of optimizer step `step` (0-based) of `total_steps`.
double scheduled_lr(const OptimConfig& config, int64_t step, int64_t total_steps);

class AdamW {
 public:
  // `params`: name -> leaf tensor (requires_grad). Weight decay applies to tensors of 2+ dimensions only
  // (not norms and biases), as is customary.
  AdamW(std::map<std::string, at::Tensor> params, OptimConfig config, int64_t total_steps);

  // One update from the current gradients (a parameter without a gradient is skipped); returns the lr used.
  double step();
  void zero_grad();
  int64_t steps_done() const { return step_; }

  const OptimConfig& config() const { return config_; }

  // ZeRO-1 update, collective over dp then tp then pp (every rank of the call runs it): the gradients
  // (flattened in name order; a missing one counts as zero) are reduce-scattered over dp and averaged, so
  // this rank holds its 1/dp share; the global norm sums the squares of that share's elements of the
  // parameters `counted(name)` says this rank counts, over dp, tp and pp; the share is clipped to max_norm (>
  // 0), stepped with its own moments, and the updated parameters are all-gathered over dp into every
  // parameter. The moments live only as this rank's share from the first call on (until load_state or
  // gather_state). Returns {grad norm before clipping, lr}. Does not zero the gradients.
  std::pair<double, double> step_zero1(comm::Group& dp, comm::Group& tp, comm::Group& pp,
                                       const std::function<bool(const std::string&)>& counted,
                                       double max_norm);
  // Collective over dp: gathers the ZeRO-1 moment shares into full moments on every rank, so state_tensors()
  // works (call it on every dp rank before saving a checkpoint). No-op before the first step_zero1.
  void gather_state(comm::Group& dp);

  // "m/<name>", "v/<name>" tensors and the step count, for checkpoints. Throws Error when the moments are
  // sharded by ZeRO-1 and not gathered since the last step (gather_state).
  std::map<std::string, at::Tensor> state_tensors() const;
  // Full (unsharded) moments, as state_tensors() writes them; a ZeRO-1 optimizer re-slices its share at its
  // next step.
  void load_state(const std::map<std::string, at::Tensor>& tensors, int64_t steps_done);

 private:
  // One parameter's piece of this rank's ZeRO-1 share.
  struct Segment {
    std::string name;
    int64_t param_offset = 0, shard_offset = 0, length = 0;
    bool decay = false;
  };
  struct Zero1Shard {
    int dp_size = 0, dp_rank = 0;
    int64_t total = 0, size = 0;  // flattened parameters; elements per rank (the last rank's share is padded)
    std::vector<Segment> segments;
    std::map<std::string, int64_t> offsets;  // each parameter's offset in the flattened parameters
    at::Tensor m, v;                         // (size) fp32
  };
  void build_zero1_shard(comm::Group& dp);

  // The fp32 value a parameter is stepped from: its master copy (made on first use) or the parameter itself.
  at::Tensor master_of(const std::string& name, const at::Tensor& p);

  std::map<std::string, at::Tensor> params_, m_, v_;
  std::map<std::string, at::Tensor> master_;  // fp32 master copies (OptimConfig::fp32_master)
  OptimConfig config_;
  int64_t total_steps_;
  int64_t step_ = 0;
  std::optional<Zero1Shard> shard_;
  bool full_state_valid_ = true;  // m_/v_ hold the current moments (false after a ZeRO-1 step)
};

}  // namespace realign::runtime
