// comm::Group: an ordered set of ranks that run collectives together.
//
// Contract (as c10d's): every member calls the same collectives in the same order with matching shapes and
// dtypes; a collective returns once this member's part is done (all of them are blocking here). A group of
// size 1 makes every collective the identity, so layers never test `size() > 1` themselves.
// Each collective starts with the same short preamble (check_collective_args in group.cc): the tensor is
// defined and (where stated) contiguous; root/peer ranks lie in [0, size()). A violation is a bug in the
// caller and aborts with file:line (REALIGN_CHECK), never a hang. A tensor may live on any device: the Gloo
// group moves one that is not on the CPU through host memory and puts the result back where it was.
// Backend gaps (Gloo in libtorch 1.13 has no bf16/bool reduction, no AVG, no reduce_scatter) are papered over
// inside the implementations with exact work-arounds, so callers never see them.
//
// Where groups come from: comm/world.h (World::from_env(): the global group, subgroups for a rank list, the
// dp/tp/pp axis groups of a plan::Layout). How tests start N ranks: comm/launcher.h.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace realign::comm {

enum class ReduceOp { kSum, kAvg, kMax, kMin };
const char* to_string(ReduceOp op);

// A posted non-blocking operation (isend / irecv). wait() blocks until it is done (and rethrows its error);
// the tensor it moves must stay alive and untouched until then (the handle keeps a reference to it).
class PendingOp {
 public:
  virtual ~PendingOp() = default;
  virtual void wait() = 0;
};

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

  // Non-blocking point-to-point: posts the transfer and returns at once, so that many transfers between
  // different peers overlap. Messages between one pair with the same `tag` are matched in posting order.
  // Unlike the collectives, a rank may post isend/irecv to different peers in any order, as long as every
  // post has its matching post on the peer. The default implementation runs the blocking send/recv at post
  // time (correct, but without overlap, and it can deadlock on cyclic exchanges): backends override it.
  virtual std::unique_ptr<PendingOp> isend(const at::Tensor& tensor, int dst, int tag);
  virtual std::unique_ptr<PendingOp> irecv(at::Tensor& tensor, int src, int tag);

  // In-place reduction with any op. kAvg divides the sum by size() (floating dtypes only). The default
  // implementation handles kSum and kAvg through all_reduce_sum; kMax/kMin need an override.
  virtual void all_reduce(at::Tensor& tensor, ReduceOp op);
  // Sum over the group, then this member's slice `rank()` of size()-many equal slices along `dim`
  // (input.size(dim) must divide by size()). The default is all-reduce then slice: exact, size() times the
  // traffic of a native reduce-scatter.
  virtual at::Tensor reduce_scatter_sum(const at::Tensor& input, int64_t dim);
  // All-to-all of rows (dim 0): rows [sum(send_counts[0..r)), +send_counts[r]) of `input` go to rank r; the
  // result holds recv_counts[s] rows from each rank s, in rank order (recv_counts[s] must equal rank s's
  // send_counts[rank()]). The default posts isend/irecv pairs; Gloo overrides it with its alltoall.
  virtual at::Tensor all_to_all_rows(const at::Tensor& input, const std::vector<int64_t>& send_counts,
                                     const std::vector<int64_t>& recv_counts);
};

// The one-rank group: every collective returns its input.
std::shared_ptr<Group> single_rank_group();

// The uniform argument preamble of every collective (see the contract above). `what` names the collective.
void check_collective_args(const Group& group, const char* what, const at::Tensor& tensor,
                           bool need_contiguous);
void check_peer(const Group& group, const char* what, int peer);
void check_all_to_all_args(const Group& group, const at::Tensor& input,
                           const std::vector<int64_t>& send_counts, const std::vector<int64_t>& recv_counts);

}  // namespace realign::comm
