// Default implementations shared by every Group, and the uniform argument preamble.
#include "comm/group.h"

#include <ATen/ATen.h>

#include "core/check.h"

namespace realign::comm {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "?";
}

void check_collective_args(const Group& group, const char* what, const at::Tensor& tensor,
                           bool need_contiguous) {
  REALIGN_CHECK(tensor.defined()) << what << ": undefined tensor (group rank " << group.rank() << ")";
  REALIGN_CHECK(!need_contiguous || tensor.is_contiguous()) << what << ": tensor must be contiguous";
}

void check_peer(const Group& group, const char* what, int peer) {
  REALIGN_CHECK(peer >= 0 && peer < group.size())
      << what << ": rank " << peer << " outside a group of " << group.size();
}

void Group::all_reduce(at::Tensor& tensor, ReduceOp op) {
  check_collective_args(*this, "all_reduce", tensor, false);
  switch (op) {
    case ReduceOp::kSum:
      all_reduce_sum(tensor);
      return;
    case ReduceOp::kAvg:
      REALIGN_CHECK(at::isFloatingType(tensor.scalar_type())) << "all_reduce avg of " << tensor.scalar_type();
      all_reduce_sum(tensor);
      tensor.div_(size());
      return;
    case ReduceOp::kMax:
    case ReduceOp::kMin:
      REALIGN_CHECK(size() == 1) << "this Group does not implement all_reduce " << to_string(op);
      return;
  }
}

namespace {
class DoneOp final : public PendingOp {
 public:
  void wait() override {}
};
}  // namespace

std::unique_ptr<PendingOp> Group::isend(const at::Tensor& tensor, int dst, int) {
  send(tensor, dst);
  return std::make_unique<DoneOp>();
}

std::unique_ptr<PendingOp> Group::irecv(at::Tensor& tensor, int src, int) {
  recv(tensor, src);
  return std::make_unique<DoneOp>();
}

at::Tensor Group::reduce_scatter_sum(const at::Tensor& input, int64_t dim) {
  check_collective_args(*this, "reduce_scatter_sum", input, false);
  const int64_t d = at::maybe_wrap_dim(dim, input.dim());
  REALIGN_CHECK(input.size(d) % size() == 0)
      << "reduce_scatter_sum: size " << input.size(d) << " along dim " << d << " not divisible by " << size();
  at::Tensor sum = input.clone(at::MemoryFormat::Contiguous);
  all_reduce_sum(sum);
  const int64_t n = input.size(d) / size();
  return sum.narrow(d, rank() * n, n).contiguous();
}

void check_all_to_all_args(const Group& group, const at::Tensor& input,
                           const std::vector<int64_t>& send_counts, const std::vector<int64_t>& recv_counts) {
  check_collective_args(group, "all_to_all_rows", input, false);
  REALIGN_CHECK(input.dim() >= 1) << "all_to_all_rows of a 0-dim tensor";
  REALIGN_CHECK(int(send_counts.size()) == group.size() && int(recv_counts.size()) == group.size())
      << "all_to_all_rows: " << send_counts.size() << " send and " << recv_counts.size()
      << " receive counts for a group of " << group.size();
  int64_t rows = 0;
  for (int64_t c : send_counts) rows += c;
  REALIGN_CHECK(rows == input.size(0))
      << "all_to_all_rows: send counts add to " << rows << ", input has " << input.size(0) << " rows";
}

at::Tensor Group::all_to_all_rows(const at::Tensor& input, const std::vector<int64_t>& send_counts,
                                  const std::vector<int64_t>& recv_counts) {
  check_all_to_all_args(*this, input, send_counts, recv_counts);
  const at::Tensor in = input.contiguous();
  std::vector<int64_t> shape = in.sizes().vec();
  int64_t total = 0;
  for (int64_t c : recv_counts) total += c;
  shape[0] = total;
  at::Tensor out = at::empty(shape, in.options());
  std::vector<std::unique_ptr<PendingOp>> ops;
  int64_t src_row = 0, dst_row = 0;
  for (int r = 0; r < size(); ++r) {
    at::Tensor piece = in.narrow(0, src_row, send_counts[size_t(r)]);
    at::Tensor slot = out.narrow(0, dst_row, recv_counts[size_t(r)]);
    if (r == rank()) {
      slot.copy_(piece);
    } else {
      ops.push_back(isend(piece, r, 0));
      ops.push_back(irecv(slot, r, 0));
    }
    src_row += send_counts[size_t(r)];
    dst_row += recv_counts[size_t(r)];
  }
  for (auto& op : ops) op->wait();
  return out;
}

}  // namespace realign::comm
