// The communication ops of expert parallelism, each with its backward counterpart (as model/tp_ops.h), the
// identity when the group has one rank: the token all-to-all of an MoE layer's dispatch and combine, and the
// gather of the rows a tp group's ranks routed apart.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "comm/group.h"

namespace realign::model {

// Rows of x to the ep group's ranks by send_counts; the rows received (recv_counts from each rank). Backward:
// the same exchange of the gradient with the counts swapped.
at::Tensor exchange_rows(const at::Tensor& x, comm::Group& ep, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& recv_counts);

// How many rows each rank of `ep` sends this one, from what this one sends each of them (a collective).
std::vector<int64_t> exchange_counts(comm::Group& ep, const std::vector<int64_t>& send_counts);

// Concatenates every tp rank's rows (rank r contributes sizes[r] rows) in rank order, for a consumer
// replicated over tp. Backward: this rank's rows of the (replicated) gradient.
at::Tensor gather_rows(const at::Tensor& x, comm::Group& tp, const std::vector<int64_t>& sizes);

}  // namespace realign::model
