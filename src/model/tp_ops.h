// Megatron's f/g pairs: the tensor-parallel communication ops, each with its backward counterpart, all the
// identity when the tp group has one rank (so layers never test tp > 1). Tensors may live on any device: for
// a group of several ranks they pass through host memory (comm groups are Gloo, CPU only).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "comm/group.h"

namespace realign::model {

// f: identity forward, all-reduce of the gradient backward. Enters a column-parallel region (each rank's
// partial gradient of its replicated input is summed).
at::Tensor copy_to_tp(const at::Tensor& x, comm::Group& tp);

// g: all-reduce forward, identity backward. Leaves a row-parallel region (partial sums become the full one).
// Also combines vocabulary-parallel partial results whose consumer is replicated on every rank.
at::Tensor reduce_from_tp(const at::Tensor& x, comm::Group& tp);

// Concatenates every rank's x along the last dimension; rank r contributes sizes[r] columns (uneven splits
// allowed). Backward: this rank's columns of the gradient.
at::Tensor gather_last_dim(const at::Tensor& x, comm::Group& tp, const std::vector<int64_t>& sizes);

// Element-wise maximum over the group, without gradient (a softmax shift).
at::Tensor all_reduce_max(const at::Tensor& x, comm::Group& tp);

}  // namespace realign::model
