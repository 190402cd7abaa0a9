#include "runtime/adamw.h"

#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <cmath>

#include "core/check.h"
#include "core/error.h"

namespace realign::runtime {

double scheduled_lr(const OptimConfig& c, int64_t step, int64_t total_steps) {
  if (c.warmup_steps > 0 && step < c.warmup_steps) return c.lr * double(step + 1) / double(c.warmup_steps);
  if (c.schedule == "constant") return c.lr;
  int64_t span = std::max<int64_t>(1, total_steps - c.warmup_steps);
  double progress = std::min(1.0, double(step - c.warmup_steps) / double(span));
  return c.lr * (c.min_lr_ratio + (1 - c.min_lr_ratio) * 0.5 * (1 + std::cos(M_PI * progress)));
}

AdamW::AdamW(std::map<std::string, at::Tensor> params, OptimConfig config, int64_t total_steps)
    : params_(std::move(params)), config_(std::move(config)), total_steps_(total_steps) {
  for (auto& [name, p] : params_) {
    // Moments in fp32 whatever the parameter dtype (bf16 moments lose small updates).
    m_[name] = at::zeros(p.sizes(), p.options().dtype(at::kFloat).requires_grad(false));
    v_[name] = at::zeros(p.sizes(), p.options().dtype(at::kFloat).requires_grad(false));
  }
}

at::Tensor AdamW::master_of(const std::string& name, const at::Tensor& p) {
  if (!config_.fp32_master || p.scalar_type() == at::kFloat) return p.detach().to(at::kFloat);
  at::Tensor& m = master_[name];
  if (!m.defined()) m = p.detach().to(at::kFloat).clone();
  return m;
}

double AdamW::step() {
  REALIGN_CHECK(full_state_valid_) << "AdamW::step after step_zero1 without gather_state";
  c10::NoGradGuard no_grad;
  double lr = scheduled_lr(config_, step_, total_steps_);
  ++step_;
  double bc1 = 1 - std::pow(config_.beta1, double(step_));
  double bc2 = 1 - std::pow(config_.beta2, double(step_));
  for (auto& [name, p] : params_) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    at::Tensor g32 = g.to(at::kFloat);
    at::Tensor& m = m_[name];
    at::Tensor& v = v_[name];
    m.mul_(config_.beta1).add_(g32, 1 - config_.beta1);
    v.mul_(config_.beta2).addcmul_(g32, g32, 1 - config_.beta2);
    at::Tensor update = (m / bc1) / ((v / bc2).sqrt_().add_(config_.eps));
    at::Tensor p32 = master_of(name, p);
    if (config_.weight_decay > 0 && p.dim() >= 2) p32.mul_(1 - lr * config_.weight_decay);
    p32.add_(update, -lr);
    p.copy_(p32);
  }
  return lr;
}

void AdamW::zero_grad() {
  for (auto& [name, p] : params_) {
    if (p.grad().defined()) p.mutable_grad() = at::Tensor();
  }
}

std::map<std::string, at::Tensor> AdamW::state_tensors() const {
  if (!full_state_valid_)
    throw Error("optim.zero1",
                "the optimizer state is sharded over the data-parallel ranks: call gather_state "
                "(gather_optimizer_state) on every dp rank before saving it");
  std::map<std::string, at::Tensor> out;
  for (const auto& [name, m] : m_) out["m/" + name] = m;
  for (const auto& [name, v] : v_) out["v/" + name] = v;
  return out;
}

void AdamW::load_state(const std::map<std::string, at::Tensor>& tensors, int64_t steps_done) {
  c10::NoGradGuard no_grad;
  for (auto* moments : {&m_, &v_}) {
    const char* prefix = moments == &m_ ? "m/" : "v/";
    for (auto& [name, p] : params_) {
      auto it = tensors.find(prefix + name);
      if (it == tensors.end())
        throw Error(std::string(prefix) + name, "optimizer state missing from the checkpoint");
      if (it->second.sizes() != p.sizes())
        throw Error(std::string(prefix) + name,
                    "optimizer state has another shape: the checkpoint is from another model");
      // Fresh tensors: a ZeRO-1 optimizer freed its full moments after its first step.
      (*moments)[name] = it->second.to(p.options().dtype(at::kFloat).requires_grad(false)).clone();
    }
  }
  step_ = steps_done;
  master_.clear();  // remade from the parameters the checkpoint loads
  full_state_valid_ = true;
  shard_.reset();  // the next ZeRO-1 step slices its share from the loaded moments
}

}  // namespace realign::runtime
