#include "model/ep_ops.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "core/check.h"

namespace realign::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

comm::Group& group_at(int64_t handle) { return *reinterpret_cast<comm::Group*>(handle); }
int64_t handle(comm::Group& g) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(&g)); }

// Collectives run on host tensors; results come back on x's device.
at::Tensor host_exchange(const at::Tensor& x, comm::Group& g, const std::vector<int64_t>& send,
                         const std::vector<int64_t>& recv) {
  return g.all_to_all_rows(x.detach().to(at::kCPU).contiguous(), send, recv).to(x.device());
}

struct ExchangeRows : torch::autograd::Function<ExchangeRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t group,
                            std::vector<int64_t> send, std::vector<int64_t> recv) {
    ctx->saved_data["group"] = group;
    ctx->saved_data["send"] = send;
    ctx->saved_data["recv"] = recv;
    return host_exchange(x, group_at(group), send, recv);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::vector<int64_t> send = ctx->saved_data["send"].toIntVector();
    const std::vector<int64_t> recv = ctx->saved_data["recv"].toIntVector();
    comm::Group& g = group_at(ctx->saved_data["group"].toInt());
    return {host_exchange(grads[0], g, recv, send), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct GatherRows : torch::autograd::Function<GatherRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t group,
                            std::vector<int64_t> sizes) {
    comm::Group& g = group_at(group);
    REALIGN_CHECK(x.size(0) == sizes[size_t(g.rank())]) << x.sizes() << " vs " << sizes[size_t(g.rank())];
    // Every rank sends its rows to every other: an all-to-all with the same rows for each peer.
    at::Tensor h = x.detach().to(at::kCPU).contiguous();
    std::vector<at::Tensor> copies(size_t(g.size()), h);
    std::vector<int64_t> send(size_t(g.size()), x.size(0));
    int64_t offset = 0;
    for (int r = 0; r < g.rank(); ++r) offset += sizes[size_t(r)];
    ctx->saved_data["offset"] = offset;
    ctx->saved_data["rows"] = x.size(0);
    return g.all_to_all_rows(at::cat(copies), send, sizes).to(x.device());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t offset = ctx->saved_data["offset"].toInt(), rows = ctx->saved_data["rows"].toInt();
    return {grads[0].narrow(0, offset, rows).contiguous(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor exchange_rows(const at::Tensor& x, comm::Group& ep, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& recv_counts) {
  if (ep.size() == 1) return x;
  return ExchangeRows::apply(x, handle(ep), send_counts, recv_counts);
}

std::vector<int64_t> exchange_counts(comm::Group& ep, const std::vector<int64_t>& send_counts) {
  if (ep.size() == 1) return send_counts;
  at::Tensor counts = at::tensor(send_counts, at::kLong).view({ep.size(), 1});
  const std::vector<int64_t> ones(size_t(ep.size()), 1);
  at::Tensor got = ep.all_to_all_rows(counts, ones, ones).flatten();
  return std::vector<int64_t>(got.data_ptr<int64_t>(), got.data_ptr<int64_t>() + got.numel());
}

at::Tensor gather_rows(const at::Tensor& x, comm::Group& tp, const std::vector<int64_t>& sizes) {
  REALIGN_CHECK(int(sizes.size()) == tp.size()) << sizes.size() << " sizes for " << tp.size() << " ranks";
  if (tp.size() == 1) return x;
  return GatherRows::apply(x, handle(tp), sizes);
}

}  // namespace realign::model
