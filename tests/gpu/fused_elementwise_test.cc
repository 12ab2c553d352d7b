// Fused SwiGLU and RoPE kernels against the ATen formulation (on the CPU), float32,
// values and gradients.
#include "models/fused_elementwise.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "models/rope.h"

namespace rollout::models {
namespace {

float MaxDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.cpu() - b.cpu()).abs().max().item<float>();
}

TEST(FusedSwiglu, MatchesSiluTimesUpWithGradients) {
  at::manual_seed(1);
  const at::Tensor gate = at::randn({7, 33}) * 3, up = at::randn({7, 33}), go = at::randn({7, 33});
  at::Tensor g_cpu = gate.clone().set_requires_grad(true), u_cpu = up.clone().set_requires_grad(true);
  const at::Tensor want = at::silu(g_cpu) * u_cpu;
  want.backward(go);
  at::Tensor g_gpu = gate.cuda().set_requires_grad(true), u_gpu = up.cuda().set_requires_grad(true);
  const at::Tensor got = FusedSwiglu(g_gpu, u_gpu);
  got.backward(go.cuda());
  EXPECT_LT(MaxDiff(got, want), 1e-5);
  EXPECT_LT(MaxDiff(g_gpu.grad(), g_cpu.grad()), 1e-5);
  EXPECT_LT(MaxDiff(u_gpu.grad(), u_cpu.grad()), 1e-5);
}

TEST(FusedRope, MatchesRotateHalfWithGradients) {
  at::manual_seed(2);
  RopeScaling scaling;
  const Rope rope(/*head_dim=*/16, /*theta=*/10000.0, scaling);
  const at::Tensor positions = at::arange(10, at::kLong).view({2, 5});
  const auto [cos, sin] = rope.CosSin(positions, at::kFloat);  // [2, 5, 16]
  const at::Tensor x = at::randn({2, 5, 3, 16}), go = at::randn({2, 5, 3, 16});
  at::Tensor x_cpu = x.clone().set_requires_grad(true);
  const at::Tensor want = Rope::Apply(x_cpu, cos, sin);  // CPU: the ATen path
  want.backward(go);
  at::Tensor x_gpu = x.cuda().set_requires_grad(true);
  const at::Tensor got = Rope::Apply(x_gpu, cos.cuda(), sin.cuda());  // CUDA: the fused kernel
  got.backward(go.cuda());
  EXPECT_LT(MaxDiff(got, want), 1e-5);
  EXPECT_LT(MaxDiff(x_gpu.grad(), x_cpu.grad()), 1e-5);
}

}  // namespace
}  // namespace rollout::models
