// comm::Group: an ordered set of ranks that run collectives together.
// Contract: every member calls the same collectives in the same order with matching shapes and dtypes.
// A group of size 1 makes every collective the identity, so layers never test `size() > 1` themselves.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace realign::comm {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;  // this process's index in the group, 0..size()-1
  virtual int size() const = 0;

  // In-place sum over the group. Any floating dtype (bf16/fp16 reduce exactly as on NCCL: through fp32).
  virtual void all_reduce_sum(at::Tensor& tensor) = 0;
  // Concatenates every member's tensor (equal shapes) along `dim`, in rank order.
  virtual at::Tensor all_gather_cat(const at::Tensor& tensor, int64_t dim) = 0;
  // Overwrites `tensor` on every member with the root's.
  virtual void broadcast(at::Tensor& tensor, int root) = 0;
  // Point-to-point within the group (ranks are group ranks). `tensor` must be contiguous.
  virtual void send(const at::Tensor& tensor, int dst) = 0;
  virtual void recv(at::Tensor& tensor, int src) = 0;
  virtual void barrier() = 0;
};

// The one-rank group: every collective returns its input.
std::shared_ptr<Group> single_rank_group();

}  // namespace realign::comm
