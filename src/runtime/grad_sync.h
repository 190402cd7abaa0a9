// Gradients across ranks: the data-parallel all-reduce (bucketed, averaging) and the global gradient norm
// over every shard (tensor- and pipeline-parallel), for clipping.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "comm/group.h"

namespace realign::runtime {

// Averages the gradients of `params` over `dp`: packed into flat fp32 buckets of about `bucket_bytes` each,
// one all-reduce per bucket. Parameters without a gradient get a zero one first (every rank must send the
// same shapes). A group of one rank returns at once.
void allreduce_gradients(const std::vector<at::Tensor>& params, comm::Group& dp,
                         size_t bucket_bytes = 32 << 20);

// Expert parallelism: the routed experts' gradients (every rank's tokens reached the experts of its ep
// group) summed over `edp`, the ranks holding the same experts, and divided by the dp degree, which makes
// them the dp average allreduce_gradients gives every other parameter. Buckets as above.
void sync_expert_gradients(const std::vector<at::Tensor>& experts, comm::Group& edp, int dp_size,
                           size_t bucket_bytes = 32 << 20);

// The L2 norm of all gradients of the model: `counted[i]` says whether this rank's shard of params[i] adds to
// it (a parameter replicated over tp counts on tp rank 0 only); the sum of squares is all-reduced over tp and
// pp. When max_norm > 0 and the norm exceeds it, every gradient is scaled by max_norm / norm. Returns the
// norm before clipping.
// With expert parallelism, `ep` and `expert` (per parameter) say which parameters are routed-expert shards:
// those count on every rank and their sum of squares is all-reduced over ep instead of tp.
double clip_grad_norm(const std::vector<at::Tensor>& params, const std::vector<bool>& counted,
                      comm::Group& tp, comm::Group& pp, double max_norm, comm::Group* ep = nullptr,
                      const std::vector<bool>* expert = nullptr);

}  // namespace realign::runtime
