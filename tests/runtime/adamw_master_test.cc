// AdamW's fp32 master weights (OptimConfig::fp32_master, on for GPU ranks): bf16 parameters stepped through
// fp32 copies follow an fp32 run exactly (rounded to bf16), where stepping the bf16 values themselves loses
// every update below bf16's resolution; ZeRO-1 over one rank keeps the same masters.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "comm/group.h"
#include "runtime/adamw.h"

namespace realign::runtime {
namespace {

// `steps` AdamW steps of lr 1e-3 on one parameter starting at 1.0 with gradient 1 at every step (each update
// ~1e-3, below bf16's half-ulp at 1.0, 2^-8); `zero1`: through step_zero1 over a one-rank group.
at::Tensor stepped(at::ScalarType dtype, bool master, int steps, bool zero1 = false) {
  OptimConfig c;
  c.lr = 1e-3;
  c.schedule = "constant";
  c.grad_clip = 0;
  c.fp32_master = master;
  at::Tensor w = at::ones({4}, at::TensorOptions().dtype(dtype)).requires_grad_(true);
  AdamW opt({{"w", w}}, c, steps);
  auto one = comm::single_rank_group();
  for (int i = 0; i < steps; ++i) {
    w.mutable_grad() = at::ones_like(w);
    if (zero1)
      opt.step_zero1(
          *one, *one, *one, [](const std::string&) { return true; }, 0);
    else
      opt.step();
  }
  return w.detach();
}

TEST(AdamWMaster, Bf16StepsThroughFp32MastersFollowTheFp32Run) {
  const at::Tensor fp32 = stepped(at::kFloat, false, 10);
  EXPECT_LT(fp32[0].item<float>(), 0.995f);  // ten updates of ~1e-3
  const at::Tensor mastered = stepped(at::kBFloat16, true, 10);
  EXPECT_TRUE(at::equal(mastered, fp32.to(at::kBFloat16))) << mastered << fp32;
  EXPECT_TRUE(at::equal(stepped(at::kBFloat16, true, 10, /*zero1=*/true), mastered));
}

TEST(AdamWMaster, WithoutMastersBf16LosesUpdatesBelowItsResolution) {
  // The CPU path's behaviour (train.dtype=bf16, no masters), kept as it was.
  EXPECT_TRUE(at::equal(stepped(at::kBFloat16, false, 10), at::ones({4}, at::kBFloat16)));
}

TEST(AdamWMaster, Fp32ParametersTakeTheSameStepsWithOrWithoutTheFlag) {
  EXPECT_TRUE(at::equal(stepped(at::kFloat, true, 10), stepped(at::kFloat, false, 10)));
}

}  // namespace
}  // namespace realign::runtime
