#include "runtime/grad_sync.h"

#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <cmath>

#include "core/check.h"

namespace realign::runtime {

namespace {

// Sums the gradients of `params` over `group` in flat fp32 buckets and divides them by `divisor`.
void sum_gradients(const std::vector<at::Tensor>& params, comm::Group& group, double divisor,
                   size_t bucket_bytes) {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : params) {
    if (!p.grad().defined()) const_cast<at::Tensor&>(p).mutable_grad() = at::zeros_like(p);
    grads.push_back(p.grad());
  }
  size_t begin = 0;
  while (begin < grads.size()) {
    size_t end = begin, bytes = 0;
    while (end < grads.size() && (end == begin || bytes + size_t(grads[end].numel()) * 4 <= bucket_bytes)) {
      bytes += size_t(grads[end].numel()) * 4;
      ++end;
    }
    std::vector<at::Tensor> flat;
    for (size_t i = begin; i < end; ++i) flat.push_back(grads[i].reshape({-1}).to(at::kFloat));
    at::Tensor bucket = at::cat(flat);
    group.all_reduce_sum(bucket);
    bucket.div_(divisor);
    int64_t offset = 0;
    for (size_t i = begin; i < end; ++i) {
      int64_t n = grads[i].numel();
      grads[i].copy_(bucket.narrow(0, offset, n).view(grads[i].sizes()));
      offset += n;
    }
    begin = end;
  }
}

}  // namespace

void allreduce_gradients(const std::vector<at::Tensor>& params, comm::Group& dp, size_t bucket_bytes) {
  if (dp.size() == 1) return;
  sum_gradients(params, dp, double(dp.size()), bucket_bytes);
}

void sync_expert_gradients(const std::vector<at::Tensor>& experts, comm::Group& edp, int dp_size,
                           size_t bucket_bytes) {
  sum_gradients(experts, edp, double(dp_size), bucket_bytes);
}

double clip_grad_norm(const std::vector<at::Tensor>& params, const std::vector<bool>& counted,
                      comm::Group& tp, comm::Group& pp, double max_norm, comm::Group* ep,
                      const std::vector<bool>* expert) {
  REALIGN_CHECK(params.size() == counted.size()) << params.size() << " vs " << counted.size();
  REALIGN_CHECK(!ep == !expert && (!expert || expert->size() == params.size()));
  c10::NoGradGuard no_grad;
  at::Tensor sum = at::zeros({1}, at::kDouble), expert_sum = at::zeros({1}, at::kDouble);
  for (size_t i = 0; i < params.size(); ++i) {
    const bool is_expert = expert && (*expert)[i];
    if ((!counted[i] && !is_expert) || !params[i].grad().defined()) continue;
    (is_expert ? expert_sum : sum) += params[i].grad().to(at::kDouble).pow(2).sum().to(at::kCPU);
  }
  tp.all_reduce_sum(sum);
  if (ep) {
    ep->all_reduce_sum(expert_sum);
    sum += expert_sum;
  }
  pp.all_reduce_sum(sum);
  double norm = std::sqrt(sum.item<double>());
  if (max_norm > 0 && norm > max_norm) {
    double scale = max_norm / (norm + 1e-6);
    for (const at::Tensor& p : params)
      if (p.grad().defined()) const_cast<at::Tensor&>(p).mutable_grad().mul_(scale);
  }
  return norm;
}

}  // namespace realign::runtime
