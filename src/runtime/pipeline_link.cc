#include "runtime/detail/pipeline_link.h"

#include <ATen/ATen.h>

#include "core/check.h"

namespace realign::runtime {

void check_pipeline_args(const comm::Group& pp, const model::Transformer& model,
                         const std::vector<model::TokenBatch>& micro_batches, const char* what) {
  REALIGN_CHECK(pp.size() == model.parallel().n_stages && pp.rank() == model.parallel().stage)
      << what << ": pp group rank " << pp.rank() << " of " << pp.size() << " runs stage "
      << model.parallel().stage << " of " << model.parallel().n_stages;
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    const model::TokenBatch& b = micro_batches[m];
    REALIGN_CHECK(b.tokens.defined() && b.tokens.dim() == 2 && b.positions.defined() &&
                  b.positions.sizes().equals(b.tokens.sizes()) && b.segments.defined() &&
                  b.segments.sizes().equals(b.tokens.sizes()))
        << what << ": micro-batch " << m << " needs tokens, positions and segments of one (B, T) shape";
  }
}

at::Tensor boundary_buffer(const model::Transformer& model, const model::TokenBatch& batch) {
  return at::empty({batch.tokens.size(0), batch.tokens.size(1), model.spec().hidden},
                   at::TensorOptions().dtype(model.dtype()).device(at::kCPU));
}

at::Tensor to_host(const at::Tensor& t) { return t.to(at::kCPU).contiguous(); }

PostedRecv::PostedRecv(comm::Group& group, at::Tensor buffer, int src, int tag)
    : buffer_(std::move(buffer)), op_(group.irecv(buffer_, src, tag)) {}

at::Tensor PostedRecv::wait() {
  REALIGN_CHECK(op_ != nullptr) << "waiting on a receive that was never posted";
  op_->wait();
  op_.reset();
  return std::move(buffer_);
}

std::vector<at::Tensor> broadcast_tensors(comm::Group& group, const std::vector<at::Tensor>& tensors,
                                          int root) {
  const bool is_root = group.rank() == root;
  // Header: count, then per tensor: dtype, ndim, sizes.
  std::vector<int64_t> header;
  std::vector<at::Tensor> host;
  if (is_root) {
    header.push_back(int64_t(tensors.size()));
    for (const at::Tensor& t : tensors) {
      REALIGN_CHECK(t.defined()) << "broadcast_tensors: undefined tensor";
      host.push_back(to_host(t));
      header.push_back(int64_t(t.scalar_type()));
      header.push_back(t.dim());
      for (int64_t s : t.sizes()) header.push_back(s);
    }
  }
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  at::Tensor length = at::full({1}, int64_t(header.size()), i64);
  group.broadcast(length, root);
  at::Tensor head = is_root ? at::tensor(header, i64) : at::empty({length.item<int64_t>()}, i64);
  group.broadcast(head, root);
  const int64_t* h = head.data_ptr<int64_t>();
  const int64_t count = h[0];
  std::vector<at::Tensor> out;
  int64_t pos = 1, total_bytes = 0;
  for (int64_t i = 0; i < count; ++i) {
    const auto dtype = static_cast<at::ScalarType>(h[pos++]);
    const int64_t ndim = h[pos++];
    std::vector<int64_t> sizes(h + pos, h + pos + ndim);
    pos += ndim;
    out.push_back(is_root ? host[size_t(i)] : at::empty(sizes, at::TensorOptions().dtype(dtype)));
    total_bytes += int64_t(out.back().nbytes());
  }
  REALIGN_CHECK(pos == head.numel()) << "broadcast_tensors: malformed header";
  // One byte buffer for all of them: views of `bytes` on the receivers, a concatenation on the root.
  at::Tensor bytes = at::empty({total_bytes}, at::TensorOptions().dtype(at::kByte));
  int64_t offset = 0;
  for (const at::Tensor& t : out) {
    const int64_t n = int64_t(t.nbytes());
    if (n > 0 && is_root) bytes.narrow(0, offset, n).copy_(t.reshape({-1}).view(at::kByte));
    offset += n;
  }
  group.broadcast(bytes, root);
  if (is_root) return out;
  offset = 0;
  for (at::Tensor& t : out) {
    const int64_t n = int64_t(t.nbytes());
    if (n > 0) t.reshape({-1}).view(at::kByte).copy_(bytes.narrow(0, offset, n));
    offset += n;
  }
  return out;
}

}  // namespace realign::runtime
