#include "model/tp_ops.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "core/check.h"

namespace realign::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Collectives run on contiguous host tensors; the result comes back on x's device.
at::Tensor host_all_reduce(const at::Tensor& x, comm::Group& g, comm::ReduceOp op) {
  at::Tensor h = x.detach().to(at::kCPU).contiguous().clone();
  g.all_reduce(h, op);
  return h.to(x.device());
}

comm::Group* group_of(AutogradContext* ctx) {
  return reinterpret_cast<comm::Group*>(ctx->saved_data["group"].toInt());
}

void save_group(AutogradContext* ctx, comm::Group& g) {
  ctx->saved_data["group"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&g));
}

struct CopyToTp : torch::autograd::Function<CopyToTp> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t group) {
    ctx->saved_data["group"] = group;
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {host_all_reduce(grads[0], *group_of(ctx), comm::ReduceOp::kSum), at::Tensor()};
  }
};

struct ReduceFromTp : torch::autograd::Function<ReduceFromTp> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x, int64_t group) {
    return host_all_reduce(x, *reinterpret_cast<comm::Group*>(group), comm::ReduceOp::kSum);
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0], at::Tensor()}; }
};

struct GatherLastDim : torch::autograd::Function<GatherLastDim> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t group, std::vector<int64_t> sizes) {
    save_group(ctx, *reinterpret_cast<comm::Group*>(group));
    comm::Group& g = *reinterpret_cast<comm::Group*>(group);
    const int64_t width = *std::max_element(sizes.begin(), sizes.end());
    REALIGN_CHECK(x.size(-1) == sizes[g.rank()]) << x.sizes() << " vs " << sizes[g.rank()];
    // all_gather_cat needs equal shapes: pad every part to the widest, gather along a new leading dim.
    at::Tensor h = x.detach().to(at::kCPU);
    if (h.size(-1) < width) h = at::constant_pad_nd(h, {0, width - h.size(-1)});
    at::Tensor all = g.all_gather_cat(h.unsqueeze(0).contiguous(), 0);
    std::vector<at::Tensor> parts;
    for (int r = 0; r < g.size(); ++r) parts.push_back(all[r].narrow(-1, 0, sizes[r]));
    int64_t offset = 0;
    for (int r = 0; r < g.rank(); ++r) offset += sizes[r];
    ctx->saved_data["offset"] = offset;
    ctx->saved_data["width"] = sizes[g.rank()];
    return at::cat(parts, -1).to(x.device());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t offset = ctx->saved_data["offset"].toInt(), width = ctx->saved_data["width"].toInt();
    return {grads[0].narrow(-1, offset, width).contiguous(), at::Tensor(), at::Tensor()};
  }
};

int64_t handle(comm::Group& g) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(&g)); }

}  // namespace

at::Tensor copy_to_tp(const at::Tensor& x, comm::Group& tp) {
  if (tp.size() == 1) return x;
  return CopyToTp::apply(x, handle(tp));
}

at::Tensor reduce_from_tp(const at::Tensor& x, comm::Group& tp) {
  if (tp.size() == 1) return x;
  return ReduceFromTp::apply(x, handle(tp));
}

at::Tensor gather_last_dim(const at::Tensor& x, comm::Group& tp, const std::vector<int64_t>& sizes) {
  REALIGN_CHECK(int(sizes.size()) == tp.size()) << sizes.size() << " sizes for " << tp.size() << " ranks";
  if (tp.size() == 1) return x;
  return GatherLastDim::apply(x, handle(tp), sizes);
}

at::Tensor all_reduce_max(const at::Tensor& x, comm::Group& tp) {
  if (tp.size() == 1) return x.detach();
  return host_all_reduce(x, tp, comm::ReduceOp::kMax);
}

}  // namespace realign::model
