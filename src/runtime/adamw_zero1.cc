// ZeRO stage 1 for AdamW: the parameters flattened in name order are cut into dp equal shares; dp rank r
// keeps the moments of share r only and updates only its elements, then the updated shares are all-gathered.
// The per-element arithmetic is that of AdamW::step, so the updates equal plain AdamW's within fp32 round-off
// (the gradient sums come from a reduce-scatter instead of an all-reduce).
#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <cmath>

#include "core/check.h"
#include "runtime/adamw.h"

namespace realign::runtime {

void AdamW::build_zero1_shard(comm::Group& dp) {
  Zero1Shard s;
  s.dp_size = dp.size();
  s.dp_rank = dp.rank();
  for (const auto& [name, p] : params_) {
    s.offsets[name] = s.total;
    s.total += p.numel();
  }
  s.size = (s.total + s.dp_size - 1) / s.dp_size;
  const int64_t begin = s.size * s.dp_rank, end = std::min(s.total, begin + s.size);
  const at::TensorOptions f32 = params_.begin()->second.options().dtype(at::kFloat).requires_grad(false);
  s.m = at::zeros({s.size}, f32);
  s.v = at::zeros({s.size}, f32);
  for (const auto& [name, p] : params_) {
    const int64_t p0 = s.offsets[name], p1 = p0 + p.numel();
    const int64_t lo = std::max(p0, begin), hi = std::min(p1, end);
    if (lo >= hi) continue;
    s.segments.push_back(Segment{name, lo - p0, lo - begin, hi - lo, p.dim() >= 2});
    // The share starts from the full moments (zeros, or a loaded / gathered state).
    s.m.narrow(0, lo - begin, hi - lo).copy_(m_.at(name).reshape({-1}).narrow(0, lo - p0, hi - lo));
    s.v.narrow(0, lo - begin, hi - lo).copy_(v_.at(name).reshape({-1}).narrow(0, lo - p0, hi - lo));
  }
  shard_ = std::move(s);
  // The full moments are what ZeRO-1 saves memory on.
  for (auto& [name, t] : m_) t = at::Tensor();
  for (auto& [name, t] : v_) t = at::Tensor();
  full_state_valid_ = false;
}

std::pair<double, double> AdamW::step_zero1(comm::Group& dp, comm::Group& tp, comm::Group& pp,
                                            const std::function<bool(const std::string&)>& counted,
                                            double max_norm) {
  c10::NoGradGuard no_grad;
  if (full_state_valid_ || !shard_ || shard_->dp_size != dp.size() || shard_->dp_rank != dp.rank())
    build_zero1_shard(dp);
  Zero1Shard& s = *shard_;

  // Reduce-scatter the flattened gradients (padded to dp equal shares), then average.
  std::vector<at::Tensor> flat;
  for (const auto& [name, p] : params_)
    flat.push_back(p.grad().defined() ? p.grad().reshape({-1}).to(at::kFloat)
                                      : at::zeros({p.numel()}, p.options().dtype(at::kFloat)));
  const int64_t pad = s.size * s.dp_size - s.total;
  if (pad > 0) flat.push_back(at::zeros({pad}, flat.front().options()));
  at::Tensor g = dp.reduce_scatter_sum(at::cat(flat), 0).contiguous();
  flat.clear();
  g.div_(double(s.dp_size));

  // Global norm: this share's counted elements, summed over dp (the shares), tp and pp (the shards).
  at::Tensor sum = at::zeros({1}, at::kDouble);
  for (const Segment& seg : s.segments)
    if (counted(seg.name))
      sum += g.narrow(0, seg.shard_offset, seg.length).to(at::kDouble).pow(2).sum().to(at::kCPU);
  dp.all_reduce_sum(sum);
  tp.all_reduce_sum(sum);
  pp.all_reduce_sum(sum);
  const double norm = std::sqrt(sum.item<double>());
  if (max_norm > 0 && norm > max_norm) g.mul_(max_norm / (norm + 1e-6));

  // AdamW on the share (the arithmetic of AdamW::step).
  const double lr = scheduled_lr(config_, step_, total_steps_);
  ++step_;
  const double bc1 = 1 - std::pow(config_.beta1, double(step_));
  const double bc2 = 1 - std::pow(config_.beta2, double(step_));
  s.m.mul_(config_.beta1).add_(g, 1 - config_.beta1);
  s.v.mul_(config_.beta2).addcmul_(g, g, 1 - config_.beta2);
  at::Tensor update = (s.m / bc1) / ((s.v / bc2).sqrt_().add_(config_.eps));
  at::Tensor p32 = at::zeros({s.size}, g.options());
  for (const Segment& seg : s.segments) {
    at::Tensor piece = p32.narrow(0, seg.shard_offset, seg.length);
    piece.copy_(
        master_of(seg.name, params_.at(seg.name)).reshape({-1}).narrow(0, seg.param_offset, seg.length));
    if (config_.weight_decay > 0 && seg.decay) piece.mul_(1 - lr * config_.weight_decay);
  }
  p32.add_(update, -lr);

  // Every rank gets every updated share.
  at::Tensor all = dp.all_gather_cat(p32, 0);
  REALIGN_CHECK(all.numel() == s.size * s.dp_size) << all.numel();
  for (auto& [name, p] : params_) {
    const int64_t off = s.offsets.at(name);
    const at::Tensor updated = all.narrow(0, off, p.numel()).view(p.sizes());
    if (master_.count(name)) master_[name].copy_(updated);
    p.detach().copy_(updated);
  }
  return {norm, lr};
}

void AdamW::gather_state(comm::Group& dp) {
  if (full_state_valid_ || !shard_) return;
  c10::NoGradGuard no_grad;
  REALIGN_CHECK(shard_->dp_size == dp.size() && shard_->dp_rank == dp.rank())
      << "gather_state over another dp group than the steps'";
  for (auto* moments : {&m_, &v_}) {
    at::Tensor all = dp.all_gather_cat(moments == &m_ ? shard_->m : shard_->v, 0);
    for (auto& [name, p] : params_)
      (*moments)[name] =
          all.narrow(0, shard_->offsets.at(name), p.numel()).view(p.sizes()).to(p.device()).clone();
  }
  full_state_valid_ = true;
}

}  // namespace realign::runtime
