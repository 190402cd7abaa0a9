#include "comm/gloo_group.h"

#if REALIGN_TORCH_HAS_GLOO
#include <ATen/ATen.h>

#include "core/check.h"

namespace realign::comm {
namespace {

// Gloo moves host memory: a tensor elsewhere (a GPU) goes through a host copy; a CPU tensor is itself.
at::Tensor on_host(const at::Tensor& t) { return t.to(at::kCPU); }

// Dtypes Gloo 1.13 reduces natively; others go through a wider type and back (exactly: fp32 holds every
// bf16/fp16 value, and a sum of bf16 values rounded once at the end is what NCCL's fp32 accumulation gives).
at::ScalarType reduce_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kDouble:
    case at::kInt:
    case at::kLong:
    case at::kChar:
    case at::kByte:
      return t;
    case at::kHalf:
    case at::kBFloat16:
      return at::kFloat;
    case at::kBool:
    case at::kShort:
      return at::kInt;
    default:
      REALIGN_CHECK(false) << "all_reduce of dtype " << t << " is not supported";
  }
  return t;
}

c10d::ReduceOp to_c10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return c10d::ReduceOp::SUM;  // Gloo has no AVG: sum, then divide below
    case ReduceOp::kMax:
      return c10d::ReduceOp::MAX;
    case ReduceOp::kMin:
      return c10d::ReduceOp::MIN;
  }
  return c10d::ReduceOp::SUM;
}

// Moves bytes (broadcast, gather, send, recv) as uint8 so every dtype (bf16, bool, complex) goes through Gloo
// unchanged. `t` must be contiguous.
at::Tensor as_bytes(const at::Tensor& t) { return t.reshape({-1}).view(at::kByte); }

// A posted Gloo send/recv: c10d's Work plus the byte view it moves (kept alive until the wait), and for a
// receive into a tensor off the host, that tensor and its host buffer (copied in after the wait).
class GlooPendingOp final : public PendingOp {
 public:
  GlooPendingOp(c10::intrusive_ptr<c10d::Work> work, std::vector<at::Tensor> tensors,
                at::Tensor target = at::Tensor(), at::Tensor host = at::Tensor())
      : work_(std::move(work)),
        tensors_(std::move(tensors)),
        target_(std::move(target)),
        host_(std::move(host)) {}
  void wait() override {
    if (work_) work_->wait();
    work_.reset();
    if (target_.defined()) target_.copy_(host_);
    target_ = at::Tensor();
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;  // null for an empty tensor (nothing to move)
  std::vector<at::Tensor> tensors_;
  at::Tensor target_, host_;
};

class GlooGroup final : public Group {
 public:
  explicit GlooGroup(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg) : pg_(std::move(pg)) {}

  int rank() const override { return pg_->getRank(); }
  int size() const override { return pg_->getSize(); }

  void all_reduce_sum(at::Tensor& tensor) override { all_reduce(tensor, ReduceOp::kSum); }

  void all_reduce(at::Tensor& tensor, ReduceOp op) override {
    check_collective_args(*this, "all_reduce", tensor, false);
    REALIGN_CHECK(op != ReduceOp::kAvg || at::isFloatingType(tensor.scalar_type()))
        << "all_reduce avg of " << tensor.scalar_type();
    if (tensor.numel() == 0) return;
    const at::ScalarType wire = reduce_dtype(tensor.scalar_type());
    const bool in_place = wire == tensor.scalar_type() && tensor.is_contiguous() && tensor.is_cpu();
    at::Tensor work = in_place ? tensor : tensor.to(at::kCPU, wire).contiguous();
    std::vector<at::Tensor> v{work};
    c10d::AllreduceOptions opts;
    opts.reduceOp = to_c10d(op);
    pg_->allreduce(v, opts)->wait();
    if (op == ReduceOp::kAvg) work.div_(size());
    if (tensor.scalar_type() == at::kBool) work = work.ne(0);  // sum/max of bools is "any", min is "all"
    if (!in_place) tensor.copy_(work);
  }

  at::Tensor all_gather_cat(const at::Tensor& tensor, int64_t dim) override {
    check_collective_args(*this, "all_gather_cat", tensor, false);
    REALIGN_CHECK(tensor.dim() >= 1) << "all_gather_cat of a 0-dim tensor";
    const int64_t d = at::maybe_wrap_dim(dim, tensor.dim());
    const at::Tensor in = on_host(tensor).contiguous();
    if (in.numel() == 0) {
      std::vector<at::Tensor> parts(size(), in);
      return at::cat(parts, d).to(tensor.device());
    }
    // Gloo 1.13 has no _allgather_base: gather into a list, then cat.
    std::vector<at::Tensor> inputs{as_bytes(in)};
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < size(); ++r) outputs[0].push_back(at::empty_like(inputs[0]));
    pg_->allgather(outputs, inputs)->wait();
    std::vector<at::Tensor> parts;
    for (auto& bytes : outputs[0]) parts.push_back(bytes.view(in.scalar_type()).view(in.sizes()));
    return at::cat(parts, d).to(tensor.device());
  }

  void broadcast(at::Tensor& tensor, int root) override {
    check_collective_args(*this, "broadcast", tensor, false);
    check_peer(*this, "broadcast", root);
    if (tensor.numel() == 0) return;
    at::Tensor work = on_host(tensor).contiguous();
    std::vector<at::Tensor> v{as_bytes(work)};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    pg_->broadcast(v, opts)->wait();
    if (!work.is_same(tensor)) tensor.copy_(work);
  }

  void send(const at::Tensor& tensor, int dst) override {
    check_collective_args(*this, "send", tensor, true);
    check_peer(*this, "send", dst);
    REALIGN_CHECK(dst != rank()) << "send to self (rank " << dst << ")";
    if (tensor.numel() == 0) return;
    std::vector<at::Tensor> v{as_bytes(on_host(tensor))};
    pg_->send(v, dst, /*tag=*/0)->wait();
  }

  void recv(at::Tensor& tensor, int src) override {
    check_collective_args(*this, "recv", tensor, true);
    check_peer(*this, "recv", src);
    REALIGN_CHECK(src != rank()) << "recv from self (rank " << src << ")";
    if (tensor.numel() == 0) return;
    at::Tensor host = on_host(tensor);
    std::vector<at::Tensor> v{as_bytes(host)};
    pg_->recv(v, src, /*tag=*/0)->wait();
    if (!host.is_same(tensor)) tensor.copy_(host);
  }

  std::unique_ptr<PendingOp> isend(const at::Tensor& tensor, int dst, int tag) override {
    check_collective_args(*this, "isend", tensor, true);
    check_peer(*this, "isend", dst);
    REALIGN_CHECK(dst != rank()) << "isend to self (rank " << dst << ")";
    REALIGN_CHECK(tag >= 0) << "isend: negative tag " << tag;
    if (tensor.numel() == 0) return std::make_unique<GlooPendingOp>(c10::intrusive_ptr<c10d::Work>(), std::vector<at::Tensor>{});
    std::vector<at::Tensor> v{as_bytes(on_host(tensor))};
    auto work = pg_->send(v, dst, tag);
    return std::make_unique<GlooPendingOp>(std::move(work), std::move(v));
  }

  std::unique_ptr<PendingOp> irecv(at::Tensor& tensor, int src, int tag) override {
    check_collective_args(*this, "irecv", tensor, true);
    check_peer(*this, "irecv", src);
    REALIGN_CHECK(src != rank()) << "irecv from self (rank " << src << ")";
    REALIGN_CHECK(tag >= 0) << "irecv: negative tag " << tag;
    if (tensor.numel() == 0) return std::make_unique<GlooPendingOp>(c10::intrusive_ptr<c10d::Work>(), std::vector<at::Tensor>{});
    at::Tensor host = on_host(tensor);
    std::vector<at::Tensor> v{as_bytes(host)};
    auto work = pg_->recv(v, src, tag);
    if (host.is_same(tensor)) return std::make_unique<GlooPendingOp>(std::move(work), std::move(v));
    return std::make_unique<GlooPendingOp>(std::move(work), std::move(v), tensor, host);
  }

  void barrier() override { pg_->barrier()->wait(); }

  at::Tensor all_to_all_rows(const at::Tensor& input, const std::vector<int64_t>& send_counts,
                             const std::vector<int64_t>& recv_counts) override {
    check_all_to_all_args(*this, input, send_counts, recv_counts);
    const at::Tensor in = on_host(input).contiguous();
    std::vector<int64_t> shape = in.sizes().vec();
    shape[0] = 0;
    for (int64_t c : recv_counts) shape[0] += c;
    at::Tensor out = at::empty(shape, in.options());
    int64_t row_bytes = int64_t(in.element_size());
    for (size_t d = 1; d < shape.size(); ++d) row_bytes *= shape[d];
    // Every member must join the collective even with nothing to move, and Gloo wants non-empty buffers:
    // one spare byte rides in each rank's message to itself.
    std::vector<int64_t> in_bytes, out_bytes;
    std::vector<at::Tensor> pieces;
    const at::Tensor in_flat = in.numel() > 0 ? as_bytes(in) : at::empty({0}, at::kByte);
    int64_t offset = 0;
    for (int r = 0; r < size(); ++r) {
      const int64_t n = send_counts[size_t(r)] * row_bytes, spare = r == rank() ? 1 : 0;
      pieces.push_back(in_flat.narrow(0, offset, n));
      if (spare) pieces.push_back(at::zeros({1}, at::kByte));
      offset += n;
      in_bytes.push_back(n + spare);
      out_bytes.push_back(recv_counts[size_t(r)] * row_bytes + spare);
    }
    at::Tensor send = at::cat(pieces);
    at::Tensor recv = at::empty({out.numel() * int64_t(out.element_size()) + 1}, at::kByte);
    // c10d's Gloo alltoall moves the count vectors it is given away: hand it copies.
    std::vector<int64_t> out_arg = out_bytes, in_arg = in_bytes;
    pg_->alltoall_base(recv, send, out_arg, in_arg)->wait();
    if (out.numel() > 0) {
      int64_t spare_at = 0;
      for (int r = 0; r <= rank(); ++r) spare_at += out_bytes[size_t(r)];
      --spare_at;
      at::Tensor dst = as_bytes(out);
      dst.narrow(0, 0, spare_at).copy_(recv.narrow(0, 0, spare_at));
      dst.narrow(0, spare_at, dst.size(0) - spare_at)
          .copy_(recv.narrow(0, spare_at + 1, dst.size(0) - spare_at));
    }
    return out.to(input.device());
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
};

}  // namespace

std::shared_ptr<Group> make_gloo_group(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg) {
  REALIGN_CHECK(pg) << "null process group";
  return std::make_shared<GlooGroup>(std::move(pg));
}

}  // namespace realign::comm
#endif  // REALIGN_TORCH_HAS_GLOO
